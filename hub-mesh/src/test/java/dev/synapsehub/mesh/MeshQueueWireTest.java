package dev.synapsehub.mesh;

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
}
