package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.core.claim.Claim;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static dev.synapsehub.mesh.MeshWireTest.WAIT;
import static dev.synapsehub.mesh.MeshWireTest.awaitType;
import static dev.synapsehub.mesh.MeshWireTest.claim;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Seed 001 §7 step 4, §9–§12 under a real partition: a minority node cut off from the others by
 * loopback proxies between the Raft ports keeps running and serving its agents; it queues their
 * strong writes (told {@code queued}, never granted), labels its reads stale, and on heal
 * reconciles every intent with its §10 outcome while the majority moved on without it.
 */
class MeshPartitionTest {
    private static final List<String[]> READS = List.of(new String[] {"state_request", "state_snapshot"},
            new String[] {"who_request", "who_snapshot"}, new String[] {"board_request", "board_snapshot"});

    @TempDir
    Path dir;
    private TestCluster cluster;
    private final List<HubClient> clients = new ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        clients.forEach(HubClient::close);
        if (cluster != null) {
            cluster.close();
        }
    }

    private HubClient agent(String node, String name) throws Exception {
        HubClient c = HubClient.connect(cluster.uri(node), WAIT);
        clients.add(c);
        c.register(name, null, WAIT);
        return c;
    }

    private static ObjectNode release(HubClient c, String task, long epoch) {
        ObjectNode f = c.frame("release");
        f.put("task_id", task);
        f.put("epoch", epoch);
        return f;
    }

    private static ObjectNode keyed(ObjectNode frame, String key) {
        frame.put("idem_key", key);
        return frame;
    }

    /** Sends {@code frame} and expects the explicit {@code queued} answer, nothing granted; returns the intent id. */
    private static String queued(HubClient c, ObjectNode frame, MeshNode taker) throws Exception {
        int before = taker.queueDepth();
        c.clearPending();
        c.send(frame);
        ObjectNode answer = c.await(f -> "error".equals(f.path("type").asText()), WAIT);
        assertThat(answer.path("error_code").asText()).as(answer.toString()).isEqualTo("queued");
        assertThat(answer.path("payload").asText()).contains("grants nothing");
        assertThat(taker.queueDepth()).isEqualTo(before + 1);
        String intentId = taker.intents().queue().queued().get(before).intentId();
        assertThat(answer.path("payload").asText()).contains(intentId);
        return intentId;
    }

    private static JsonNode label(HubClient c, String request, String reply) throws Exception {
        c.clearPending();
        c.send(c.frame(request));
        return c.awaitType(reply, WAIT).path("staleness");
    }

    private static ObjectNode reconciled(HubClient c, String intentId) throws Exception {
        return c.await(f -> "intent_reconciled".equals(f.path("type").asText())
                && intentId.equals(f.path("intent_id").asText()), Duration.ofSeconds(90));
    }

    @Test
    void aPartitionedMinorityQueuesLabelsItsReadsStaleAndReconcilesEveryOutcomeOnHeal() throws Exception {
        cluster = TestCluster.partitionable(dir, 3, true);
        MeshNode leader = cluster.awaitLeader();
        MeshNode taker = cluster.follower(leader);
        String takerId = taker.nodeId();
        String otherId = leader.nodeId();
        assertThat(cluster.config(takerId).peers()).as("the taker reaches the others through its proxies only")
                .filteredOn(p -> !p.id().equals(takerId))
                .allMatch(p -> p.port() == cluster.links().link(takerId, p.id()).port());

        HubClient dave = agent(takerId, "dave");
        HubClient alice = agent(takerId, "alice");
        HubClient bob = agent(takerId, "bob");
        HubClient carol = agent(takerId, "carol");
        HubClient erin = agent(takerId, "erin");
        alice.send(claim(alice, "A1"));
        long aliceEpoch = awaitType(alice, "claim_granted", "A1").path("epoch").asLong();
        carol.send(claim(carol, "C1"));
        long carolEpoch = awaitType(carol, "claim_granted", "C1").path("epoch").asLong();
        TestCluster.await("the taker reads as fresh", () -> !taker.staleness().isStale());

        cluster.links().isolate(takerId);
        TestCluster.await("the cut-off node reads as stale", () -> taker.staleness().isStale());
        assertThat(taker.status().role()).as("still running").isNotEqualTo("STOPPED");

        String noop = queued(dave, keyed(claim(dave, "K1"), "k1"), taker);
        String superseded = queued(alice, release(alice, "A1", aliceEpoch), taker);
        String conflict = queued(bob, claim(bob, "B1"), taker);
        String fenced = queued(carol, release(carol, "C1", carolEpoch), taker);
        String applied = queued(erin, claim(erin, "E1"), taker);
        List<String> order = List.of(noop, superseded, conflict, fenced, applied);
        assertThat(taker.intents().queue().queued()).extracting(QueuedIntent::intentId).isEqualTo(order);
        for (HubClient c : List.of(dave, bob, erin)) {
            assertThat(c.pending()).as("a queued claim grants nothing")
                    .noneMatch(f -> "claim_granted".equals(f.path("type").asText()));
        }
        assertThat(MeshReplicationTest.claims(taker)).extracting(Claim::taskId).containsExactlyInAnyOrder("A1", "C1");
        for (String[] q : READS) {
            JsonNode label = label(erin, q[0], q[1]);
            assertThat(label.path("source").asText()).as(q[1]).isEqualTo("replica");
            assertThat(label.path("isStale").asBoolean(false)).as(q[1]).isTrue();
            assertThat(label.path("queueDepth").asInt()).as(q[1]).isEqualTo(5);
            assertThat(label.path("replicationLagMs").asLong()).as(q[1]).isPositive();
        }

        // the majority moves on without the taker, its agents on the other nodes
        HubClient dave2 = agent(otherId, "dave");
        dave2.send(keyed(claim(dave2, "K1"), "k1"));
        awaitType(dave2, "claim_granted", "K1");
        HubClient alice2 = agent(otherId, "alice");
        alice2.send(release(alice2, "A1", aliceEpoch));
        awaitType(alice2, "release_granted", "A1");
        HubClient frank = agent(otherId, "frank");
        frank.send(claim(frank, "B1"));
        awaitType(frank, "claim_granted", "B1");
        HubClient carol2 = agent(otherId, "carol");
        carol2.send(release(carol2, "C1", carolEpoch));
        awaitType(carol2, "release_granted", "C1");
        carol2.clearPending();
        carol2.send(claim(carol2, "C1"));
        long reclaimed = awaitType(carol2, "claim_granted", "C1").path("epoch").asLong();
        assertThat(reclaimed).as("a new claim epoch").isGreaterThan(carolEpoch);
        assertThat(taker.queueDepth()).as("nothing replayed while cut off").isEqualTo(5);

        cluster.links().healAll();

        Map<HubClient, String[]> expected = Map.of(dave, new String[] {noop, "noop_already_applied"},
                alice, new String[] {superseded, "superseded"}, bob, new String[] {conflict, "conflict_requires_merge"},
                carol, new String[] {fenced, "rejected_fenced"}, erin, new String[] {applied, "applied"});
        for (var e : expected.entrySet()) {
            ObjectNode report = reconciled(e.getKey(), e.getValue()[0]);
            assertThat(report.path("outcome").asText()).as(e.getKey().name()).isEqualTo(e.getValue()[1]);
        }
        TestCluster.await("every intent reconciled and counted",
                () -> taker.queueDepth() == 0 && taker.intentCounters().reconciled() == 5);
        IntentQueue queue = taker.intents().queue();
        assertThat(queue.get(noop).outcome()).isEqualTo(ReplayOutcome.NOOP_ALREADY_APPLIED);
        assertThat(queue.get(superseded).outcome()).isEqualTo(ReplayOutcome.SUPERSEDED);
        assertThat(queue.get(conflict).outcome()).isEqualTo(ReplayOutcome.CONFLICT_REQUIRES_MERGE);
        assertThat(queue.get(conflict).detail()).startsWith("LEASE_LIVE");
        assertThat(queue.get(fenced).outcome()).isEqualTo(ReplayOutcome.REJECTED_FENCED);
        assertThat(queue.get(applied).outcome()).isEqualTo(ReplayOutcome.APPLIED);
        assertThat(awaitType(erin, "claim_granted", "E1").path("owner").asText()).isEqualTo("erin");

        TestCluster.await("the healed node reads as fresh", () -> !taker.staleness().isStale());
        JsonNode fresh = label(erin, "state_request", "state_snapshot");
        assertThat(fresh.path("queueDepth").asInt(-1)).isZero();
        assertThat(fresh.path("isStale").asBoolean(true)).isFalse();

        // every node agrees: erin's claim committed, the other intents changed nothing
        MeshNode now = cluster.awaitLeader();
        cluster.awaitApplied(now.status().appliedSeq());
        for (MeshNode n : cluster.running()) {
            assertThat(MeshReplicationTest.claims(n)).as(n.nodeId()).extracting(c -> c.taskId() + "=" + c.owner())
                    .containsExactlyInAnyOrder("K1=dave", "B1=frank", "C1=carol", "E1=erin");
            assertThat(MeshReplicationTest.claims(n)).filteredOn(c -> c.taskId().equals("C1"))
                    .extracting(Claim::epoch).containsExactly(reclaimed);
        }
    }
}
