package dev.synapsehub.federation.follow;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.federation.testing.Await;
import dev.synapsehub.federation.testing.FakePeer;
import dev.synapsehub.federation.testing.FedHub;
import dev.synapsehub.federation.testing.Federation;
import dev.synapsehub.federation.testing.Http;
import dev.synapsehub.federation.testing.Pki;
import dev.synapsehub.federation.testing.TrustFiles;
import dev.synapsehub.federation.trust.ServingTrust;
import dev.synapsehub.journal.StoredEvent;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The standing watch (contract §11.2) between real hubs over mutual TLS: the advisory fold
 * (INV-MH-2), persistence and resumption, contiguity and content checks, quarantine and
 * operator recovery, and per-peer isolation.
 */
class WatchTest {
    static final Duration WAIT = Duration.ofSeconds(15);
    static final double LEASE_END = Math.floor(System.currentTimeMillis() / 1000.0) + 3600;
    @TempDir
    Path dir;
    Pki pki;
    Pki.HubCerts a;
    final List<AutoCloseable> open = new ArrayList<>();

    @BeforeEach
    void pki() throws Exception {
        pki = new Pki(dir);
        a = pki.hub("hub-a");
    }

    @AfterEach
    void close() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    private <T extends AutoCloseable> T keep(T c) {
        open.add(c);
        return c;
    }

    /** Hub B serving its log to hub-a. */
    private FedHub owner(Path db) throws Exception {
        Path policy = TrustFiles.servingPolicy(dir.resolve("b-trust"), pki.clientCaFile(),
                List.of(TrustFiles.peering("a.example", "proj", "k", List.of(a.client().pin().text()))),
                List.of(new TrustFiles.Grant("hub-a", "a.example", "proj", "k")));
        return FedHub.serving(pki.hub("hub-b"), db, ServingTrust.load(policy, m -> { }));
    }

    private FedHub follower(Path db, List<WatchPeer> peers) throws Exception {
        return new FedHub(a, db, Federation.follower(a, peers, Map.of("proj", "hub-b")));
    }

    private static PeerView view(FedHub hub, String peer) {
        return hub.federation.fold().peer(peer);
    }

    @Test
    void aPeersClaimsAreFoldedAsAdvisoryStateTaggedWithThePeerAndGrantNothingHere() throws Exception {
        FedHub b = keep(owner(dir.resolve("b.db")));
        HubClient agent = b.agent("proj/b1");
        FedHub.claim(agent, "proj/b1", "T-1", "src/x");
        FedHub.claim(agent, "proj/b1", "T-2", "src/y");
        ObjectNode release = agent.frame("proj/b1", "release");
        release.put("task_id", "T-2");
        agent.send(release);
        agent.awaitType("release_granted", WAIT);
        long end = b.durable.journal().lastSeq();

        FedHub follower = keep(follower(dir.resolve("a.db"), List.of(Federation.peer("hub-b", b.uri(), b.certs))));
        Await.until("hub-a folds hub-b's log", WAIT, () -> view(follower, "hub-b").cursor() == end);
        PeerView v = view(follower, "hub-b");
        assertThat(v.claims()).containsOnlyKeys("T-1");
        ObservedClaim t1 = v.claims().get("T-1");
        assertThat(t1.owner()).isEqualTo("proj/b1");
        assertThat(t1.namespace()).isEqualTo("proj");
        assertThat(t1.peer()).isEqualTo("hub-b");
        // INV-MH-2: the observed claim is not a claim here
        int liveHere = follower.durable.actor().read(s -> s.claims().liveCount()).get();
        assertThat(liveHere).isZero();

        HubClient reader = follower.agent("ops/reader");
        reader.send(reader.frame("ops/reader", "multihub_observed_request"));
        ObjectNode observed = reader.awaitType("multihub_observed", WAIT);
        assertThat(observed.path("advisory").asBoolean()).isTrue();
        ObjectNode peer = (ObjectNode) observed.path("peers").get(0);
        assertThat(peer.path("peer").asText()).isEqualTo("hub-b");
        assertThat(peer.path("cursor").asLong()).isEqualTo(end);
        assertThat(peer.path("claims").get(0).path("task_id").asText()).isEqualTo("T-1");
        assertThat(peer.path("claims").get(0).path("observed_on").asText()).isEqualTo("hub-b");
        assertThat(peer.path("claims").get(0).path("live").asBoolean()).isTrue();
        // federation status: the measured round trip of the last poll and the peer's server certificate expiry
        assertThat(peer.path("round_trip_seconds").isNumber()).as(peer.toString()).isTrue();
        assertThat(peer.path("round_trip_seconds").asDouble()).isPositive();
        assertThat(peer.path("certificate_not_after").asDouble())
                .isEqualTo(b.certs.server().certificate().getNotAfter().getTime() / 1000.0);
        assertThat(Http.get(follower, "/metrics")).contains("synapse_multihub_peer_cursor{peer=\"hub-b\"} " + end)
                .contains("synapse_multihub_peer_live_claims{peer=\"hub-b\"} 1");
    }

    @Test
    void aRestartedFollowerHasItsViewBackAtOnceAndResumesFromItsCursor() throws Exception {
        FedHub b = keep(owner(dir.resolve("b.db")));
        HubClient agent = b.agent("proj/b1");
        for (int i = 0; i < 5; i++) {
            FedHub.claim(agent, "proj/b1", "T-" + i, "src/" + i);
        }
        long end = b.durable.journal().lastSeq();
        Path aDb = dir.resolve("a.db");
        List<WatchPeer> peers = List.of(Federation.peer("hub-b", b.uri(), b.certs));
        FedHub first = follower(aDb, peers);
        Await.until("first follower catches up", WAIT, () -> view(first, "hub-b").cursor() == end);
        first.close();

        long servedBefore = b.federation.metrics().logEventsServed.get();
        FedHub second = keep(follower(aDb, peers));
        PeerView restored = view(second, "hub-b"); // read before any poll could commit
        assertThat(restored.cursor()).isEqualTo(end);
        assertThat(restored.claims()).hasSize(5);
        FedHub.claim(agent, "proj/b1", "T-new", "src/new");
        long end2 = b.durable.journal().lastSeq();
        Await.until("second follower folds the new claim", WAIT, () -> view(second, "hub-b").cursor() == end2);
        assertThat(view(second, "hub-b").claims()).containsKey("T-new").hasSize(6);
        // it pulled the overlap event and the new ones, not the whole log again
        assertThat(b.federation.metrics().logEventsServed.get() - servedBefore).isLessThan(end);
    }

    /** A scripted log: {@code log.get()} is the peer's whole log; requests are answered from it honestly. */
    private static Function<ObjectNode, ObjectNode> honest(AtomicReference<List<ObjectNode>> log) {
        return request -> {
            long after = request.path("after_seq").asLong();
            int limit = request.path("limit").isInt() ? request.path("limit").asInt() : Integer.MAX_VALUE;
            ObjectNode out = JsonNodeFactory.instance.objectNode();
            ArrayNode events = out.putArray("events");
            long last = after;
            for (ObjectNode e : log.get()) {
                if (e.path("seq").asLong() > after && events.size() < limit) {
                    events.add(e);
                    last = e.path("seq").asLong();
                }
            }
            out.put("next_cursor", last);
            out.put("log_end_seq", log.get().size());
            return out;
        };
    }

    private static ObjectNode claimEvent(long seq, String task, String owner) {
        ObjectNode e = JsonNodeFactory.instance.objectNode();
        e.put("seq", seq);
        e.put("ts", 1_700_000_000.5 + seq);
        e.put("kind", "claim");
        ObjectNode p = e.putObject("payload");
        p.put("task_id", task);
        p.put("owner", owner);
        p.put("lease_expires_at", LEASE_END); // fixed: the same event must read the same every time
        p.put("epoch", seq);
        p.put("status", "claimed");
        return e;
    }

    private static List<ObjectNode> log(String... owners) {
        List<ObjectNode> l = new ArrayList<>();
        for (int i = 0; i < owners.length; i++) {
            l.add(claimEvent(i + 1, "T-" + (i + 1), owners[i]));
        }
        return l;
    }

    @Test
    void aGappedOrMalformedSnapshotFailsThePollAndNeverAdvancesTheCursor() throws Exception {
        AtomicReference<Function<ObjectNode, ObjectNode>> script = new AtomicReference<>(req -> {
            ObjectNode out = JsonNodeFactory.instance.objectNode();
            ArrayNode events = out.putArray("events");
            events.add(claimEvent(1, "T-1", "proj/x"));
            events.add(claimEvent(3, "T-3", "proj/x")); // seq 2 is missing
            out.put("next_cursor", 3);
            out.put("log_end_seq", 3);
            return out;
        });
        FakePeer fake = keep(new FakePeer(pki.hub("hub-f"), r -> script.get().apply(r)));
        FedHub follower = keep(follower(dir.resolve("a.db"), List.of(Federation.peer("hub-f", fake.uri(), fake.certs))));
        Await.until("the gapped poll fails", WAIT, () -> view(follower, "hub-f").lastError() != null);
        assertThat(view(follower, "hub-f").lastError()).contains("not contiguous");
        assertThat(view(follower, "hub-f").cursor()).isZero();
        assertThat(view(follower, "hub-f").claims()).isEmpty(); // T-1 was valid, but the poll as a whole was not

        script.set(req -> {
            ObjectNode out = JsonNodeFactory.instance.objectNode();
            out.put("events", "not a list");
            out.put("next_cursor", 0);
            out.put("log_end_seq", 3);
            return out;
        });
        Await.until("the malformed poll fails", WAIT, () -> view(follower, "hub-f").lastError().contains("malformed"));
        assertThat(view(follower, "hub-f").cursor()).isZero();

        AtomicReference<List<ObjectNode>> good = new AtomicReference<>(log("proj/x", "proj/x", "proj/y"));
        script.set(honest(good));
        Await.until("a good poll commits", WAIT, () -> view(follower, "hub-f").cursor() == 3);
        assertThat(view(follower, "hub-f").lastError()).isNull();
        assertThat(view(follower, "hub-f").claims()).containsOnlyKeys("T-1", "T-2", "T-3");
    }

    @Test
    void differentContentAtTheSameSeqQuarantinesThePeerUntilAnOperatorRecoversIt() throws Exception {
        AtomicReference<List<ObjectNode>> peerLog = new AtomicReference<>(log("proj/x", "proj/x", "proj/x"));
        FakePeer fake = keep(new FakePeer(pki.hub("hub-f"), honest(peerLog)));
        FedHub follower = keep(follower(dir.resolve("a.db"), List.of(Federation.peer("hub-f", fake.uri(), fake.certs))));
        Await.until("caught up", WAIT, () -> view(follower, "hub-f").cursor() == 3);
        int polled = fake.requests.get();
        Await.until("identical content re-read at the overlap is idempotent", WAIT, () -> fake.requests.get() > polled + 1);
        assertThat(view(follower, "hub-f").quarantined()).isFalse();

        peerLog.set(log("proj/x", "proj/x", "proj/EVIL", "proj/x")); // seq 3 rewritten
        Await.until("quarantined", WAIT, () -> view(follower, "hub-f").quarantined());
        assertThat(Http.get(follower, "/health")).as("a peer no longer followed: not ok")
                .contains("\"status\":\"degraded\"").contains("\"multihub_peer_quarantined\"");
        assertThat(view(follower, "hub-f").cursor()).isEqualTo(3);
        assertThat(view(follower, "hub-f").claims().get("T-3").owner()).isEqualTo("proj/x"); // last good observation kept
        List<StoredEvent> audit = auditRows(follower);
        assertThat(audit).extracting(StoredEvent::kind).containsExactly("multihub_equivocation");
        assertThat(audit.get(0).payload()).contains("\"peer_id\":\"hub-f\"").contains("\"observer_id\":\"hub-a\"")
                .contains("\"seq\":3").contains("\"status\":\"quarantined\"");

        HubClient operator = follower.agent("ops/alice");
        ObjectNode recover = operator.frame("ops/alice", "multihub_recover_request");
        recover.put("peer", "hub-f");
        recover.put("reason", "hub-f restored from backup, ticket 42");
        operator.send(recover);
        ObjectNode result = operator.awaitType("multihub_recover_result", WAIT);
        assertThat(result.path("recovered").asBoolean()).as(result.toString()).isTrue();
        Await.until("following the new log generation", WAIT, () -> view(follower, "hub-f").cursor() == 4);
        assertThat(view(follower, "hub-f").quarantined()).isFalse();
        assertThat(view(follower, "hub-f").generation()).isEqualTo(1);
        assertThat(view(follower, "hub-f").claims().get("T-3").owner()).isEqualTo("proj/EVIL");
        assertThat(Http.get(follower, "/health")).contains("\"status\":\"ok\"");
        assertThat(auditRows(follower)).extracting(StoredEvent::kind)
                .containsExactly("multihub_equivocation", "multihub_equivocation_recovery");
    }

    @Test
    void aPeerWhoseRetentionDeletedTheRowsAfterTheCursorFailsThePollAsCompactedAndFoldsNothing() throws Exception {
        FedHub b = keep(owner(dir.resolve("b.db")));
        HubClient agent = b.agent("proj/b1");
        FedHub.claim(agent, "proj/b1", "T-1", "src/x");
        FedHub.claim(agent, "proj/b1", "T-2", "src/y");
        dev.synapsehub.federation.testing.Compaction.through(dir.resolve("b.db"), 1);
        FedHub follower = keep(follower(dir.resolve("a.db"), List.of(Federation.peer("hub-b", b.uri(), b.certs))));
        Await.until("the poll fails", WAIT, () -> view(follower, "hub-b").lastError() != null);
        assertThat(view(follower, "hub-b").lastError())
                .contains("Log compacted: rows after seq 0 through seq 1 were deleted by retention");
        assertThat(view(follower, "hub-b").cursor()).isZero();
        assertThat(view(follower, "hub-b").claims()).isEmpty();
        assertThat(Http.get(follower, "/metrics"))
                .contains("synapse_multihub_peer_observation_errors_total{peer=\"hub-b\",kind=\"compacted\"}");
    }

    @Test
    void aPeerRestartedWithAShorterLogFailsItsPollsAndTheLastObservationStays() throws Exception {
        AtomicReference<List<ObjectNode>> peerLog = new AtomicReference<>(log("proj/x", "proj/x", "proj/x"));
        FakePeer fake = keep(new FakePeer(pki.hub("hub-f"), honest(peerLog)));
        FedHub follower = keep(follower(dir.resolve("a.db"), List.of(Federation.peer("hub-f", fake.uri(), fake.certs))));
        Await.until("caught up", WAIT, () -> view(follower, "hub-f").cursor() == 3);
        ch.qos.logback.classic.Logger logger = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(
                PeerFollower.class);
        ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> lines =
                new ch.qos.logback.core.read.ListAppender<>();
        lines.start();
        logger.addAppender(lines);
        try {
            peerLog.set(log("proj/x"));
            Await.until("the regression is seen", WAIT, () -> view(follower, "hub-f").lastError() != null);
            Await.until("the regression is logged", WAIT, () -> warnings(lines).stream().anyMatch(m -> m.contains("behind")));
        } finally {
            logger.detachAppender(lines);
        }
        String warned = warnings(lines).stream().filter(m -> m.contains("behind")).findFirst().orElseThrow();
        assertThat(warned).startsWith("multihub watch: poll of peer 'hub-f' failed: the peer's log ends at seq 1, behind "
                + "this hub's cursor 3").endsWith("; keeping the last observation");
        assertThat(warned.split("keeping the last observation", -1)).as(warned).hasSize(2); // said once
        assertThat(view(follower, "hub-f").lastError()).contains("behind this hub's cursor 3");
        assertThat(view(follower, "hub-f").cursor()).isEqualTo(3);
        assertThat(view(follower, "hub-f").claims()).hasSize(3);
        // persisted beside the journal, so a stopped hub's offline view shows it (federation observed --db)
        Await.until("the error is in the mirror", WAIT, () -> stored(dir.resolve("a.db"), "hub-f").lastError() != null);
        PeerView stored = stored(dir.resolve("a.db"), "hub-f");
        assertThat(stored.lastError()).contains("behind this hub's cursor 3");
        assertThat(stored.cursor()).isEqualTo(3);
        assertThat(stored.lastSuccess()).isPositive();
        assertThat(stored.claims()).hasSize(3);

        // a recovery of a peer that is not quarantined says so, and still re-reads it from seq 0
        HubClient operator = follower.agent("ops/alice");
        ObjectNode recover = operator.frame("ops/alice", "multihub_recover_request");
        recover.put("peer", "hub-f");
        recover.put("reason", "hub-f restored from backup, ticket 43");
        operator.send(recover);
        ObjectNode result = operator.awaitType("multihub_recover_result", WAIT);
        assertThat(result.path("recovered").asBoolean()).as(result.toString()).isTrue();
        assertThat(result.path("detail").asText()).isEqualTo("peer 'hub-f' was not quarantined; recovered it all the "
                + "same: log generation 1, re-reading it from seq 0");
        Await.until("re-read from seq 0", WAIT, () -> view(follower, "hub-f").lastError() == null
                && view(follower, "hub-f").cursor() == 1);
        assertThat(view(follower, "hub-f").generation()).isEqualTo(1);
    }

    private static List<String> warnings(ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> lines) {
        synchronized (lines) { // the appender's lock: AppenderBase.doAppend adds to the list under it
            return lines.list.stream().filter(e -> e.getLevel() == ch.qos.logback.classic.Level.WARN)
                    .map(ch.qos.logback.classic.spi.ILoggingEvent::getFormattedMessage).toList();
        }
    }

    /** What the mirror beside {@code db} holds for {@code peer}, read as a stopped hub's would be. */
    private static PeerView stored(Path db, String peer) {
        try (SqliteMirror mirror = SqliteMirror.open(db)) {
            return mirror.load().stream().filter(v -> v.peer().equals(peer)).findFirst().orElseThrow();
        } catch (Mirror.MirrorException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void aSilentPeerNeverDelaysTheOthers() throws Exception {
        FakePeer silent = keep(new FakePeer(pki.hub("hub-s"), r -> null));
        AtomicReference<List<ObjectNode>> peerLog = new AtomicReference<>(log("proj/x", "proj/y"));
        FakePeer live = keep(new FakePeer(pki.hub("hub-l"), honest(peerLog)));
        FedHub follower = keep(follower(dir.resolve("a.db"), List.of(
                Federation.peer("hub-s", silent.uri(), silent.certs), Federation.peer("hub-l", live.uri(), live.certs))));
        Await.until("the silent peer was asked", WAIT, () -> silent.requests.get() > 0);
        Await.until("the live peer is followed meanwhile", Duration.ofSeconds(5),
                () -> view(follower, "hub-l").cursor() == 2);
        assertThat(view(follower, "hub-s").lastError()).isNull(); // its first poll is still waiting for the 10 s bound
        peerLog.set(log("proj/x", "proj/y", "proj/z"));
        Await.until("and keeps being followed", Duration.ofSeconds(5), () -> view(follower, "hub-l").cursor() == 3);
    }

    /**
     * The equivocation records of the hub's journal (the fake peers assert claims in a namespace
     * this follower gives to hub-b, so partition records are journaled too; PartitionTest pins those).
     */
    private static List<StoredEvent> auditRows(FedHub hub) throws Exception {
        return hub.durable.actor().read(s -> {
            try {
                return hub.durable.journal().readStored(0, 1000, Long.MAX_VALUE);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }).get().stream().filter(e -> e.kind().startsWith("multihub_equivocation")).toList();
    }
}
