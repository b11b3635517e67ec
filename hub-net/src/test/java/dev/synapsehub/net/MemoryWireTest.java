package dev.synapsehub.net;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.core.state.CoordinationState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Participant memory (contract A12) over real loopback sockets: {@code recall_log} is acked
 * privately, {@code finding} is gated with the exact reject and floor texts, stamped by the hub
 * and broadcast, charged to a per-name quota that survives a restart with {@code --db}, and keyed
 * apply-once only with {@code --db} (PM6).
 */
class MemoryWireTest {
    @TempDir
    Path dir;
    private final AtomicInteger barriers = new AtomicInteger();

    /** A well-formed finding as the Python client sends it (provenance and validity objects). */
    private static ObjectNode finding(HubClient c, String statement) {
        ObjectNode f = c.frame("finding");
        f.put("statement", "  " + statement + " ").put("subkind", "decision");
        f.putObject("provenance").put("session", "s1");
        f.putObject("validity").put("valid_from", 1.0);
        return f;
    }

    /**
     * Everything the hub broadcast before now has reached {@code c}: a chat it sends itself comes
     * back after every broadcast committed before it. Returns the frames that came first.
     */
    private List<ObjectNode> barrier(HubClient c) throws Exception {
        String marker = "barrier-" + barriers.incrementAndGet();
        ObjectNode chat = c.frame("chat");
        chat.put("target", "all").put("payload", marker);
        c.send(chat);
        c.await(f -> marker.equals(f.path("payload").asText()), WAIT);
        List<ObjectNode> before = c.pending();
        c.clearPending();
        return before;
    }

    private static boolean type(JsonNode f, String t) {
        return t.equals(f.path("type").asText());
    }

    @Test
    void recallLogIsAcknowledgedPrivatelyAndNeverRefused() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient alice = hub.agent("p/alice");
            HubClient bob = hub.agent("p/bob");
            barrier(bob);
            ObjectNode r = alice.frame("RECALL_LOG"); // type is case-insensitive
            r.put("target", "p/bob").put("query_text", 42).put("was_used", "false").put("idem_key", "k");
            r.putArray("returned_claim_ids").add(1).addNull().add(true);
            alice.send(r);
            ObjectNode ack = alice.awaitType("recall_logged", WAIT);
            assertThat(ack.path("payload").asText()).isEqualTo("recall logged");
            assertThat(ack.path("target").asText()).isEqualTo("p/alice");
            assertThat(ack.path("sender").asText()).isEqualTo("SynapseHub");
            assertThat(ack.has("seq")).as("no seq without --db").isFalse();
            alice.send(alice.frame("recall_log")); // nothing is required
            assertThat(alice.awaitType("recall_logged", WAIT).has("seq")).isFalse();
            assertThat(barrier(bob)).noneMatch(f -> type(f, "recall_logged"));
        }
    }

    @Test
    void aFindingIsStampedAndBroadcast() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient alice = hub.agent("p/alice");
            HubClient bob = hub.agent("p/bob");
            ObjectNode f = finding(alice, "the cache is per worktree");
            f.put("evidence_ref", " docs/x.md ").put("producer_confidence", "0.5").put("extra", 1);
            f.putArray("tags").add(" a ").add("").add(7).add("b");
            ((ObjectNode) f.get("provenance")).put("actor", "forged").put("source_event_seq", 3.7).put("ts", true);
            alice.send(f);
            ObjectNode mine = alice.awaitType("finding_recorded", WAIT);
            ObjectNode seen = bob.awaitType("finding_recorded", WAIT);
            assertThat(seen).isEqualTo(mine);
            assertThat(mine.path("target").asText()).isEqualTo("all");
            assertThat(mine.path("payload").asText()).isEqualTo("finding recorded");
            assertThat(mine.path("verdict").asText()).isEqualTo("accept");
            assertThat(mine.path("claim_status").isNull()).isTrue();
            assertThat(mine.has("seq")).isFalse();
            JsonNode rec = mine.path("finding");
            assertThat(rec.path("statement").asText()).isEqualTo("the cache is per worktree");
            assertThat(rec.path("evidence_ref").asText()).isEqualTo("docs/x.md");
            assertThat(rec.path("freshness").asText()).isEqualTo("traceable-unchecked");
            assertThat(rec.path("lifecycle").asText()).isEqualTo("active");
            assertThat(rec.path("producer_confidence").isNull()).isTrue();
            assertThat(rec.path("tags").toString()).isEqualTo("[\"a\",\"b\"]");
            assertThat(rec.path("entities").toString()).isEqualTo("[]");
            assertThat(rec.has("extra")).isFalse();
            JsonNode prov = rec.path("provenance");
            assertThat(prov.path("actor").asText()).as("the hub stamps the bound name").isEqualTo("p/alice");
            assertThat(prov.path("project").asText()).isEqualTo("p");
            assertThat(prov.path("session").asText()).isEqualTo("s1");
            assertThat(prov.path("source_event_seq").asLong()).isEqualTo(3);
            double at = rec.path("verified_at_source").path("at").asDouble();
            assertThat(prov.path("ts").asDouble()).as("a bool ts is unset: the receive time").isEqualTo(at);
            assertThat(rec.path("validity").path("valid_from").asDouble()).as("a client value is kept").isEqualTo(1.0);
            assertThat(rec.path("validity").path("valid_to").isNull()).isTrue();
            assertThat(rec.path("verified_at_source").path("by").asText()).isEqualTo("p/alice");
            assertThat(rec.path("verified_at_source").path("checked_this_session").asBoolean()).isFalse();
            assertThat(rec.path("verified_at_source").path("source_ref").asText()).isEmpty();
        }
    }

    @Test
    void theEmitGateRejectsWithEveryReasonInOrder() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient alice = hub.agent("p/alice");
            HubClient bob = hub.agent("p/bob");
            barrier(bob);
            alice.send(alice.frame("finding"));
            ObjectNode bare = alice.awaitType("finding_rejected", WAIT);
            assertThat(bare.path("target").asText()).isEqualTo("p/alice");
            assertThat(bare.path("payload").asText()).isEqualTo("empty statement; empty subkind; "
                    + "missing provenance (INV-5); missing validity (INV-5)");
            assertThat(bare.path("reasons")).hasSize(4);

            ObjectNode lesson = finding(alice, "x");
            lesson.put("subkind", "lesson").put("evidence_kind", 5);
            alice.send(lesson);
            assertThat(alice.awaitType("finding_rejected", WAIT).path("payload").asText()).isEqualTo(
                    "missing claim_status for scientific subkind 'lesson' (INV-5); missing evidence_kind for subkind 'lesson'");

            ObjectNode lock = finding(alice, "x");
            lock.put("evidence_kind", "falsified").put("claim_status", "reference-validated");
            alice.send(lock);
            ObjectNode l4 = alice.awaitType("finding_rejected", WAIT);
            assertThat(l4.path("payload").asText()).isEqualTo("LOCK-4: falsified evidence cannot claim reference-validated");
            assertThat(barrier(bob)).noneMatch(f -> type(f, "finding_rejected") || type(f, "finding_recorded"));
        }
    }

    @Test
    void theFloorStepsRunInOrderEachSeeingThePrevious() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient alice = hub.agent("p/alice");
            ObjectNode f = finding(alice, "x");
            f.put("evidence_kind", "producer-asserted").put("claim_status", "reference-validated")
                    .put("evidence_ref", "r").put("freshness", "verified-at-source");
            alice.send(f);
            ObjectNode floored = alice.awaitType("finding_recorded", WAIT);
            assertThat(floored.path("verdict").asText()).isEqualTo("floor");
            assertThat(floored.path("payload").asText()).isEqualTo("producer-asserted testimony cannot be "
                    + "verified-at-source; freshness lowered to traceable-unchecked; INV-6: producer-asserted testimony "
                    + "cannot be born 'reference-validated'; capped at bounded-support");
            assertThat(floored.path("claim_status").asText()).isEqualTo("bounded-support");
            assertThat(floored.path("finding").path("freshness").asText()).isEqualTo("traceable-unchecked");

            ObjectNode falsified = finding(alice, "y");
            falsified.put("evidence_kind", "falsified").put("claim_status", "roadmap");
            alice.send(falsified);
            ObjectNode refuted = alice.awaitType("finding_recorded", WAIT);
            assertThat(refuted.path("payload").asText())
                    .isEqualTo("INV-2: falsified evidence renders the claim refuted, not 'roadmap'");
            assertThat(refuted.path("claim_status").asText()).isEqualTo("refuted");

            ObjectNode unref = finding(alice, "z");
            unref.put("evidence_kind", "measured").put("claim_status", "reference-validated");
            alice.send(unref);
            assertThat(alice.awaitType("finding_recorded", WAIT).path("payload").asText()).isEqualTo("INV-1: "
                    + "reference-validated requires an evidence_ref and freshness==verified-at-source; floored to "
                    + "bounded-support");
        }
    }

    @Test
    void theQuotaCountsAdmittedFindingsPerNameAndWithoutDbKeysAreIgnored() throws Exception {
        try (TestHub hub = new TestHub(HubConfig.builder().maxFindingsPerAgent(0))) { // 0 behaves as 1
            HubClient alice = hub.agent("p/alice");
            HubClient bob = hub.agent("p/bob");
            alice.send(alice.frame("finding")); // a gate rejection uses no slot
            alice.awaitType("finding_rejected", WAIT);
            ObjectNode keyed = finding(alice, "once");
            keyed.put("idem_key", "k1");
            alice.send(keyed);
            assertThat(alice.awaitType("finding_recorded", WAIT).has("seq")).isFalse();
            bob.awaitType("finding_recorded", WAIT);
            alice.send(keyed); // without --db the key is ignored: applied again, and the quota is full
            ObjectNode full = alice.awaitType("finding_rejected", WAIT);
            assertThat(full.path("payload").asText()).isEqualTo("Agent 'p/alice' has reached the 1 durable-finding quota.");
            assertThat(full.path("reasons").toString()).isEqualTo("[\"Agent 'p/alice' has reached the 1 durable-finding quota.\"]");
            assertThat(barrier(bob)).noneMatch(f -> type(f, "finding_recorded"));
            bob.send(finding(bob, "mine"));
            assertThat(bob.awaitType("finding_recorded", WAIT).path("finding").path("provenance").path("actor").asText())
                    .isEqualTo("p/bob");
        }
    }

    @Test
    void withDbKeyedWritesApplyOnceAcrossARestartAndTheQuotaStaysFull() throws Exception {
        Path db = dir.resolve("hub.db");
        ObjectNode firstRecall;
        ObjectNode firstFinding;
        ObjectNode keyedFinding;
        try (TestHub hub = new TestHub(HubConfig.builder().maxFindingsPerAgent(2), db, CoordinationState::new)) {
            HubClient alice = hub.agent("p/alice");
            HubClient bob = hub.agent("p/bob");
            alice.send(alice.frame("recall_log"));
            assertThat(alice.awaitType("recall_logged", WAIT).has("seq")).as("unkeyed: no seq").isFalse();
            ObjectNode recall = alice.frame("recall_log");
            recall.put("query_text", "where").put("idem_key", "r1");
            alice.send(recall);
            firstRecall = alice.awaitType("recall_logged", WAIT);
            assertThat(firstRecall.path("seq").asLong()).isPositive();
            alice.send(recall);
            assertThat(alice.awaitType("recall_logged", WAIT)).isEqualTo(firstRecall);
            ObjectNode changed = recall.deepCopy().put("query_text", "else");
            alice.send(changed);
            ObjectNode conflict = alice.awaitType("error", WAIT);
            assertThat(conflict.path("payload").asText()).isEqualTo("Idempotency key was already used for a different request.");
            assertThat(conflict.path("error_code").asText()).isEqualTo("idempotency_conflict");
            assertThat(conflict.path("timestamp")).isEqualTo(firstRecall.path("timestamp"));
            assertThat(conflict.has("idem_key")).isFalse();

            keyedFinding = finding(alice, "durable");
            keyedFinding.put("idem_key", "f1");
            alice.send(keyedFinding);
            firstFinding = alice.awaitType("finding_recorded", WAIT);
            assertThat(firstFinding.path("seq").asLong()).isGreaterThan(firstRecall.path("seq").asLong());
            assertThat(bob.awaitType("finding_recorded", WAIT)).isEqualTo(firstFinding);
            alice.send(finding(alice, "second"));
            alice.awaitType("finding_recorded", WAIT);
        }
        try (TestHub hub = new TestHub(HubConfig.builder().maxFindingsPerAgent(2), db, CoordinationState::new)) {
            HubClient alice = hub.agent("p/alice");
            HubClient bob = hub.agent("p/bob");
            barrier(bob);
            alice.send(keyedFinding);
            ObjectNode replayed = alice.awaitType("finding_recorded", WAIT);
            assertThat(replayed).as("the stored frame, byte for byte").isEqualTo(firstFinding);
            assertThat(replayed.path("target").asText()).isEqualTo("all");
            assertThat(barrier(bob)).as("a repeat goes to the requester only").noneMatch(f -> type(f, "finding_recorded"));
            alice.send(finding(alice, "third"));
            assertThat(alice.awaitType("finding_rejected", WAIT).path("payload").asText())
                    .isEqualTo("Agent 'p/alice' has reached the 2 durable-finding quota.");
            ObjectNode recall = alice.frame("recall_log");
            recall.put("query_text", "where").put("idem_key", "r1");
            alice.send(recall);
            assertThat(alice.awaitType("recall_logged", WAIT)).isEqualTo(firstRecall);
        }
    }
}
