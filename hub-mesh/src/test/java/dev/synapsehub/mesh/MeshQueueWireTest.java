package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;

import static dev.synapsehub.mesh.MeshWireTest.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/** On the wire: a write without a quorum is answered {@code queued}; its outcome comes later as {@code intent_reconciled}. */
class MeshQueueWireTest {
    @TempDir
    Path dir;
    private TestCluster cluster;
    private HubClient ann;

    @AfterEach
    void stop() throws Exception {
        if (ann != null) {
            ann.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void theAgentIsToldItsClaimIsQueuedNotGrantedAndLaterWhatBecameOfIt() throws Exception {
        cluster = new TestCluster(dir, 3, true);
        MeshNode leader = cluster.awaitLeader();
        MeshNode taker = cluster.follower(leader);
        ann = HubClient.connect(cluster.uri(taker.nodeId()), WAIT);
        ann.register("ann", null, WAIT);
        List<String> others = cluster.running().stream().map(MeshNode::nodeId)
                .filter(id -> !id.equals(taker.nodeId())).toList();
        for (String id : others) {
            cluster.stop(id);
        }

        ann.send(MeshWireTest.claim(ann, "W1"));
        ObjectNode queued = ann.await(f -> "error".equals(f.path("type").asText()), WAIT);
        assertThat(queued.path("error_code").asText()).isEqualTo("queued");
        assertThat(queued.path("payload").asText()).contains("queued as intent").contains("grants nothing");
        String intentId = taker.intents().queue().queued().get(0).intentId();
        assertThat(queued.path("payload").asText()).contains(intentId);
        assertThat(ann.pending()).noneMatch(f -> "claim_granted".equals(f.path("type").asText()));

        for (String id : others) {
            cluster.start(id);
        }
        ObjectNode report = ann.await(f -> "intent_reconciled".equals(f.path("type").asText()),
                java.time.Duration.ofSeconds(60));
        assertThat(report.path("intent_id").asText()).isEqualTo(intentId);
        assertThat(report.path("outcome").asText()).isEqualTo("applied");
        assertThat(report.path("task_id").asText()).isEqualTo("W1");
        assertThat(report.path("target").asText()).isEqualTo("ann");
        ObjectNode granted = MeshWireTest.awaitType(ann, "claim_granted", "W1");
        assertThat(granted.path("owner").asText()).isEqualTo("ann");
    }

    private static ObjectNode ask(HubClient c, String request, String reply) throws Exception {
        c.send(c.frame(request));
        return c.awaitType(reply, WAIT);
    }

    @Test
    void readsCarryTheStalenessBlockAndMeshStatusCountsTheQueue() throws Exception {
        cluster = new TestCluster(dir, 3, true);
        MeshNode leader = cluster.awaitLeader();
        MeshNode taker = cluster.follower(leader);
        HubClient lead = HubClient.connect(cluster.uri(leader.nodeId()), WAIT);
        try {
            lead.register("lea", null, WAIT);
            lead.send(MeshWireTest.claim(lead, "W0"));
            MeshWireTest.awaitType(lead, "claim_granted", "W0");
            for (String[] q : new String[][] {{"state_request", "state_snapshot"}, {"who_request", "who_snapshot"},
                    {"board_request", "board_snapshot"}}) {
                JsonNode label = ask(lead, q[0], q[1]).path("staleness");
                assertThat(label.path("source").asText()).as(q[1]).isEqualTo("local-committed");
                assertThat(label.path("isStale").asBoolean(true)).as(q[1]).isFalse();
                assertThat(label.path("replicationLagMs").asLong(-1)).as(q[1]).isZero();
                assertThat(label.path("queueDepth").asInt(-1)).as(q[1]).isZero();
                assertThat(label.path("lastGlobalCommitAt").isNumber()).as(q[1]).isTrue();
            }
        } finally {
            lead.close();
        }

        ann = HubClient.connect(cluster.uri(taker.nodeId()), WAIT);
        ann.register("ann", null, WAIT);
        TestCluster.await("the follower reads as fresh", () -> !taker.staleness().isStale());
        JsonNode fresh = ask(ann, "state_request", "state_snapshot").path("staleness");
        assertThat(fresh.path("source").asText()).isEqualTo("replica");
        TestCluster.await("the follower applied W0", () -> taker.staleness().lastGlobalCommitAt() != null);
        assertThat(ask(ann, "who_request", "who_snapshot").path("staleness").path("lastGlobalCommitAt").isNumber())
                .as("the time of the grant of W0").isTrue();

        List<MeshPeer> peers = cluster.config(taker.nodeId()).peers();
        for (MeshNode n : cluster.running()) {
            if (n != taker) {
                cluster.stop(n.nodeId());
            }
        }
        ann.send(MeshWireTest.claim(ann, "W2"));
        assertThat(ann.await(f -> "error".equals(f.path("type").asText()), WAIT).path("error_code").asText())
                .isEqualTo("queued");
        TestCluster.await("the cut-off node reads as stale", () -> taker.staleness().isStale());
        for (String[] q : new String[][] {{"state_request", "state_snapshot"}, {"who_request", "who_snapshot"},
                {"board_request", "board_snapshot"}}) {
            JsonNode label = ask(ann, q[0], q[1]).path("staleness");
            assertThat(label.path("source").asText()).as(q[1]).isEqualTo("replica");
            assertThat(label.path("isStale").asBoolean(false)).as(q[1]).isTrue();
            assertThat(label.path("queueDepth").asInt()).as(q[1]).isEqualTo(1);
            assertThat(label.path("replicationLagMs").asLong()).as(q[1]).isPositive();
        }
        java.util.Map<String, Integer> depths = MeshQueueProbe.queueDepths(peers, java.time.Duration.ofSeconds(5));
        assertThat(depths.get(taker.nodeId())).as("the cut-off node answers its own queue depth").isEqualTo(1);
        assertThat(depths.entrySet()).filteredOn(e -> !e.getKey().equals(taker.nodeId()))
                .allMatch(e -> e.getValue() == null);
        List<MeshPeer> cutOff = peers.stream().filter(p -> p.id().equals(taker.nodeId())).toList();
        assertThat(MeshGroup.askEachVoter(cutOff, java.time.Duration.ofSeconds(5), null,
                MeshJson.bytes(MeshSettingsCheck.query()), MeshQueueProbe::depth))
                .as("its settings answer carries the depth too, so mesh status asks it once")
                .containsExactly(java.util.Map.entry(taker.nodeId(), 1));
        String metrics = metrics(cluster.uri(taker.nodeId()).getPort());
        assertThat(metrics).contains("\nsynapse_mesh_queue_depth 1\n")
                .contains("\nsynapse_mesh_intents_queued_total 1\n")
                .contains("\nsynapse_mesh_intents_reconciled_total 0\n");
    }

    private static String metrics(int port) throws Exception {
        java.net.http.HttpResponse<String> r = java.net.http.HttpClient.newHttpClient().send(
                java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://127.0.0.1:" + port + "/metrics"))
                        .timeout(java.time.Duration.ofSeconds(20)).GET().build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(200);
        return r.body();
    }

    @Test
    void aSingleHubsReadsHaveNoStalenessBlock() throws Exception {
        dev.synapsehub.core.actor.CoordinationActor actor = new dev.synapsehub.core.actor.CoordinationActor(
                new dev.synapsehub.core.state.CoordinationState(), new dev.synapsehub.core.journal.InMemoryJournal(),
                () -> System.currentTimeMillis() / 1000.0, dev.synapsehub.core.actor.ActorSettings.DEFAULTS);
        actor.start();
        dev.synapsehub.net.HubServer hub = new dev.synapsehub.net.HubServer(dev.synapsehub.net.HubConfig.builder()
                .host("127.0.0.1").port(0).build(), actor, () -> System.currentTimeMillis() / 1000.0);
        try {
            int port = hub.start();
            ann = HubClient.connect(java.net.URI.create("ws://127.0.0.1:" + port + "/"), WAIT);
            ann.register("ann", null, WAIT);
            assertThat(ask(ann, "state_request", "state_snapshot").has("staleness")).isFalse();
            assertThat(ask(ann, "who_request", "who_snapshot").has("staleness")).isFalse();
            assertThat(ask(ann, "board_request", "board_snapshot").has("staleness")).isFalse();
        } finally {
            hub.close();
            actor.close();
        }
    }
}
