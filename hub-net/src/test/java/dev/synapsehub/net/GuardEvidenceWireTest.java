package dev.synapsehub.net;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.event.AuditRecordEvent;
import dev.synapsehub.core.journal.InMemoryJournal;
import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.journal.SqliteJournal;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;

import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Guard-denial evidence (contract A3) on a token hub with a journal, over a real loopback
 * socket: every member is checked in the contract's order with its exact text, an accepted
 * denial is journaled as an audit-only {@code guard_denial} row and answered privately with its
 * journal seq, {@code idem_key} applies it once (also after a restart, which replays the row and
 * changes nothing), and the per-principal ingress limit refuses the 101st request in a minute and
 * a window over 256 KiB.
 */
class GuardEvidenceWireTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String TOKEN = "s3cret";
    private static final String ACTOR = "a".repeat(64);
    private static final String CALL = "0123456789abcdef".repeat(4);
    private static final String SCOPE = "f".repeat(64);

    @TempDir
    Path dir;

    private static ObjectNode denial(HubClient c) {
        ObjectNode g = c.frame("guard_denial");
        g.put("reason_code", "GUARD_NO_CLAIM").put("provider", "claude").put("path_count", 2)
                .put("actor_sha256", ACTOR).put("call_sha256", CALL).put("scope_sha256", SCOPE);
        return g;
    }

    private static HubClient agent(TestHub hub, String name) throws Exception {
        HubClient c = hub.connect();
        c.register(name, TOKEN, WAIT);
        return c;
    }

    private static String sha256(String text) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
    }

    private static List<JournaledEvent> guardRows(Path db) throws Exception {
        try (SqliteJournal j = SqliteJournal.open(db)) {
            return j.readAfter(0, 1000, Set.of("guard_denial"));
        }
    }

    @Test
    void eachMemberIsCheckedInTheContractsOrderAndARefusalJournalsNothing() throws Exception {
        Path db = dir.resolve("hub.db");
        try (TestHub hub = new TestHub(HubConfig.builder().token(TOKEN), db, CoordinationState::new)) {
            HubClient a = agent(hub, "p/alpha");
            Object[][] cases = {
                {"reason_code", "GUARD_SOMETHING", "guard denial reason_code is not recognised"},
                {"reason_code", null, "guard denial reason_code is not recognised"},
                {"provider", "vim", "guard denial provider is not recognised"},
                {"provider", 7, "guard denial provider is not recognised"},
                {"path_count", "2", "guard denial path_count must be an integer"},
                {"path_count", true, "guard denial path_count must be an integer"},
                {"path_count", 2.0, "guard denial path_count must be an integer"},
                {"path_count", -1, "guard denial path_count is outside the supported bound"},
                {"path_count", 513, "guard denial path_count is outside the supported bound"},
                {"path_count", new java.math.BigInteger("99999999999999999999"),
                    "guard denial path_count is outside the supported bound"},
                {"actor_sha256", ACTOR.toUpperCase(), "guard denial actor_sha256 must be lowercase SHA-256"},
                {"call_sha256", CALL.substring(1), "guard denial call_sha256 must be lowercase SHA-256"},
                {"scope_sha256", 5, "guard denial scope_sha256 must be lowercase SHA-256"},
            };
            for (Object[] c : cases) {
                ObjectNode g = denial(a);
                String field = (String) c[0];
                if (c[1] == null) {
                    g.remove(field);
                } else {
                    g.set(field, JSON.valueToTree(c[1]));
                }
                a.send(g);
                ObjectNode e = a.awaitType("error", WAIT);
                assertThat(e.path("payload").asText()).as(field + "=" + c[1]).isEqualTo(c[2]);
                assertThat(e.path("error_code").asText()).isEqualTo("guard_evidence");
            }
            // the order: a bad reason_code wins over a bad provider, which wins over the digests
            ObjectNode both = denial(a).put("reason_code", "x").put("provider", "x").put("scope_sha256", "x");
            a.send(both);
            assertThat(a.awaitType("error", WAIT).path("payload").asText())
                    .isEqualTo("guard denial reason_code is not recognised");
            ObjectNode digests = denial(a).put("scope_sha256", "x").put("actor_sha256", "y");
            a.send(digests);
            assertThat(a.awaitType("error", WAIT).path("payload").asText())
                    .isEqualTo("guard denial actor_sha256 must be lowercase SHA-256");
            // the bounds themselves are accepted
            for (int count : new int[] {0, 512}) {
                a.send(denial(a).put("path_count", count));
                a.awaitType("guard_denial_recorded", WAIT);
            }
        }
        assertThat(guardRows(db)).hasSize(2);
    }

    @Test
    void anAcceptedDenialIsJournaledAndAnsweredPrivatelyAndAKeyAppliesItOnceAcrossARestart() throws Exception {
        Path db = dir.resolve("hub.db");
        ObjectNode keyed;
        ObjectNode first;
        JsonNode claimsBefore;
        try (TestHub hub = new TestHub(HubConfig.builder().token(TOKEN), db, CoordinationState::new)) {
            HubClient a = agent(hub, "p/alpha");
            HubClient watcher = agent(hub, "p/watcher");
            ObjectNode claim = watcher.frame("claim");
            claim.put("task_id", "T-1").putArray("paths").add("src/guarded");
            watcher.send(claim);
            watcher.awaitType("claim_granted", WAIT);
            ObjectNode g = denial(a);
            g.put("unknown_member", "ignored").put("reason_code", "GUARD_OWNERSHIP_AMBIGUOUS");
            a.send(g);
            ObjectNode recorded = a.awaitType("guard_denial_recorded", WAIT);
            assertThat(recorded.path("payload").asText()).isEqualTo("Guard denial evidence recorded.");
            assertThat(recorded.path("target").asText()).isEqualTo("p/alpha");
            assertThat(recorded.path("call_sha256").asText()).isEqualTo(CALL);
            assertThat(recorded.path("reason_code").asText()).isEqualTo("GUARD_OWNERSHIP_AMBIGUOUS");
            assertThat(recorded.path("audit_seq").isIntegralNumber()).isTrue();
            long seq = recorded.path("audit_seq").asLong();
            assertThat(seq).isPositive();

            keyed = denial(a).put("idem_key", "g-1");
            a.send(keyed);
            first = a.awaitType("guard_denial_recorded", WAIT);
            assertThat(first.path("audit_seq").asLong()).isGreaterThan(seq);
            a.send(keyed);
            assertThat(a.awaitType("guard_denial_recorded", WAIT)).as("a keyed repeat: the stored frame").isEqualTo(first);
            a.send(keyed.deepCopy().put("path_count", 3));
            ObjectNode conflict = a.awaitType("error", WAIT);
            assertThat(conflict.path("error_code").asText()).isEqualTo("idempotency_conflict");

            claimsBefore = TestHub.state(watcher).path("snapshot").path("active_claims"); // after all published before
            assertThat(watcher.received()).noneMatch(f -> f.path("type").asText().startsWith("guard"));
        }
        List<JournaledEvent> rows = guardRows(db);
        assertThat(rows).hasSize(2);
        assertThat(rows.get(1).seq()).isEqualTo(first.path("audit_seq").asLong());
        JsonNode stored = JSON.readTree(((AuditRecordEvent) rows.get(0).event()).payloadJson());
        assertThat(stored.path("reason_code").asText()).isEqualTo("GUARD_OWNERSHIP_AMBIGUOUS");
        assertThat(stored.path("provider").asText()).isEqualTo("claude");
        assertThat(stored.path("path_count").isIntegralNumber()).isTrue();
        assertThat(stored.path("path_count").asInt()).isEqualTo(2);
        assertThat(stored.path("actor_sha256").asText()).isEqualTo(ACTOR);
        assertThat(stored.path("call_sha256").asText()).isEqualTo(CALL);
        assertThat(stored.path("scope_sha256").asText()).isEqualTo(SCOPE);
        assertThat(stored.path("decision").asText()).isEqualTo("deny");
        assertThat(stored.path("credential_principal_sha256").asText())
                .isEqualTo(sha256("auth-token:" + sha256("synapse-channel:claim-quota-principal:v1\0" + TOKEN)));
        assertThat(stored.path("recorder_sha256").asText()).isEqualTo(sha256("p/alpha"));
        assertThat(stored.has("unknown_member")).isFalse();
        assertThat(stored.size()).as("the six members, the decision and the two digests").isEqualTo(9);

        try (TestHub hub = new TestHub(HubConfig.builder().token(TOKEN), db, CoordinationState::new)) {
            HubClient a = agent(hub, "p/alpha");
            a.send(keyed);
            assertThat(a.awaitType("guard_denial_recorded", WAIT)).as("the key is remembered after a replay")
                    .isEqualTo(first);
            assertThat(TestHub.state(a).path("snapshot").path("active_claims")).as("replayed evidence alters no lease")
                    .isEqualTo(claimsBefore);
            assertThat(claimsBefore.size()).isEqualTo(1);
            a.send(denial(a));
            assertThat(a.awaitType("guard_denial_recorded", WAIT).path("audit_seq").asLong())
                    .isGreaterThan(first.path("audit_seq").asLong());
        }
        assertThat(guardRows(db)).hasSize(3);
    }

    /** The edge clock, set by the test. */
    static final class ManualClock implements Clock {
        private volatile double now = 1_800_000_000.0;

        @Override
        public double nowSeconds() {
            return now;
        }

        void advance(double seconds) {
            now += seconds;
        }
    }

    @Test
    void theIngressLimitRefusesTheHundredAndFirstInAMinuteAndAWindowOverItsBytes() throws Exception {
        ManualClock clock = new ManualClock();
        InMemoryJournal journal = new InMemoryJournal();
        CoordinationActor actor = new CoordinationActor(new CoordinationState(), journal, clock, ActorSettings.DEFAULTS);
        actor.start();
        try (TestHub hub = new TestHub(HubConfig.builder().token(TOKEN), actor, clock, journal)) {
            HubClient a = agent(hub, "p/alpha");
            HubClient b = agent(hub, "p/beta"); // the same token: the same principal
            ObjectNode keyed = denial(a).put("idem_key", "before-the-limit");
            a.send(keyed);
            ObjectNode first = a.awaitType("guard_denial_recorded", WAIT);
            for (int retry = 0; retry < 3; retry++) { // keyed repeats are answered from the ledger and use no allowance
                a.send(keyed);
                assertThat(a.awaitType("guard_denial_recorded", WAIT)).isEqualTo(first);
            }
            for (int i = 1; i < 100; i++) {
                HubClient c = i % 2 == 0 ? a : b;
                c.send(denial(c));
                c.awaitType("guard_denial_recorded", WAIT);
            }
            b.send(denial(b));
            ObjectNode limited = b.awaitType("error", WAIT);
            assertThat(limited.path("payload").asText()).isEqualTo("guard denial evidence ingress limit exceeded");
            assertThat(limited.path("error_code").asText()).isEqualTo("guard_evidence_rate_limited");
            assertThat(limited.path("limit_reason").asText()).isEqualTo("events");
            a.send(denial(a).put("reason_code", "nonsense"));
            assertThat(a.awaitType("error", WAIT).path("error_code").asText())
                    .as("the limit comes before validation").isEqualTo("guard_evidence_rate_limited");
            a.send(keyed);
            assertThat(a.awaitType("guard_denial_recorded", WAIT)).as("a remembered key beats the limit")
                    .isEqualTo(first);

            clock.advance(60.0);
            a.send(denial(a));
            a.awaitType("guard_denial_recorded", WAIT);

            clock.advance(61.0); // an empty window
            String padding = "x".repeat(60 * 1024);
            for (int i = 0; i < 4; i++) {
                a.send(denial(a).put("padding", padding)); // unknown members are ignored, but they are ingress
                a.awaitType("guard_denial_recorded", WAIT);
            }
            a.send(denial(a).put("padding", padding));
            ObjectNode bytes = a.awaitType("error", WAIT);
            assertThat(bytes.path("error_code").asText()).isEqualTo("guard_evidence_rate_limited");
            assertThat(bytes.path("limit_reason").asText()).isEqualTo("bytes");
            a.send(denial(a));
            a.awaitType("guard_denial_recorded", WAIT); // a small one still fits
        }
    }
}
