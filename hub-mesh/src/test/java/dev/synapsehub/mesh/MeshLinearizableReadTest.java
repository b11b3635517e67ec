package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static dev.synapsehub.mesh.MeshWireTest.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Seed 001 §12: a client may ask for a linearizable read ({@code "consistency": "linearizable"}
 * on {@code state_request}, {@code who_request}, {@code board_request}) instead of a local one.
 * The node then reads only after catching up to the leader's read index, so the reply holds
 * every write acknowledged before the request, whichever node took it, and its staleness block
 * says so; without a leader and a quorum it refuses instead of answering from a state that may
 * be behind.
 */
class MeshLinearizableReadTest {
    @TempDir
    Path dir;
    private TestCluster cluster;
    private final List<HubClient> clients = new ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        for (HubClient c : clients) {
            c.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    private HubClient agent(MeshNode node, String name) throws Exception {
        HubClient c = HubClient.connect(cluster.uri(node.nodeId()), WAIT);
        clients.add(c);
        c.register(name, null, WAIT);
        return c;
    }

    private static ObjectNode linearizable(HubClient c, String request) {
        ObjectNode f = c.frame(request);
        f.put("consistency", "linearizable");
        return f;
    }

    private static List<String> claimedTasks(JsonNode stateSnapshot) {
        List<String> tasks = new ArrayList<>();
        stateSnapshot.path("snapshot").path("active_claims").forEach(c -> tasks.add(c.path("task_id").asText()));
        return tasks;
    }

    @Test
    void aLinearizableReadOnAFollowerHoldsEveryAcknowledgedWriteAndSaysSo() throws Exception {
        cluster = new TestCluster(dir, 3, true);
        MeshNode leader = cluster.awaitLeader();
        MeshNode follower = cluster.follower(leader);
        HubClient lea = agent(leader, "lea");
        HubClient ann = agent(follower, "ann");

        for (int i = 0; i < 5; i++) {
            String task = "L" + i;
            lea.send(MeshWireTest.claim(lea, task));
            MeshWireTest.awaitType(lea, "claim_granted", task); // acknowledged by the leader's node
            ann.send(linearizable(ann, "state_request"));
            ObjectNode state = ann.awaitType("state_snapshot", WAIT);
            assertThat(claimedTasks(state)).as("the follower's linearizable read after the grant of " + task)
                    .contains(task);
            JsonNode label = state.path("staleness");
            assertThat(label.path("consistency").asText()).isEqualTo("linearizable");
            assertThat(label.path("source").asText()).as("which node answered (leadership may move under load)")
                    .isIn("replica", "local-committed");
            assertThat(label.path("isStale").asBoolean(true)).isFalse();
            assertThat(label.path("replicationLagMs").asLong(-1)).isZero();
        }
        for (String[] q : new String[][] {{"who_request", "who_snapshot"}, {"board_request", "board_snapshot"}}) {
            ann.send(linearizable(ann, q[0]));
            assertThat(ann.awaitType(q[1], WAIT).path("staleness").path("consistency").asText()).as(q[1])
                    .isEqualTo("linearizable");
        }
        ann.send(ann.frame("state_request"));
        assertThat(ann.awaitType("state_snapshot", WAIT).path("staleness").has("consistency"))
                .as("a read that did not ask is a local one, labelled as before").isFalse();
        lea.send(linearizable(lea, "state_request"));
        assertThat(lea.awaitType("state_snapshot", WAIT).path("staleness").path("consistency").asText())
                .as("on the leader's node too").isEqualTo("linearizable");
        assertThat(follower.reads().served()).isEqualTo(7);
        assertThat(follower.reads().refused()).isZero();
    }

    @Test
    void withoutAQuorumALinearizableReadIsRefusedWhileALocalOneIsLabelledStale() throws Exception {
        cluster = new TestCluster(dir, 3, true);
        MeshNode leader = cluster.awaitLeader();
        MeshNode follower = cluster.follower(leader);
        HubClient ann = agent(follower, "ann");
        ann.send(MeshWireTest.claim(ann, "Q1"));
        MeshWireTest.awaitType(ann, "claim_granted", "Q1");
        for (MeshNode n : cluster.running()) {
            if (n != follower) {
                cluster.stop(n.nodeId());
            }
        }

        ann.send(linearizable(ann, "state_request"));
        ObjectNode refused = ann.await(f -> "error".equals(f.path("type").asText())
                || "state_snapshot".equals(f.path("type").asText()), WAIT);
        assertThat(refused.path("type").asText()).as(refused.toString()).isEqualTo("error");
        assertThat(refused.path("error_code").asText()).isEqualTo("busy");
        assertThat(refused.path("payload").asText()).contains("No leader confirmed a read index")
                .contains("nothing was read");
        assertThat(follower.reads().refused()).isEqualTo(1);

        TestCluster.await("the cut-off node reads as stale", () -> follower.staleness().isStale());
        ann.send(ann.frame("state_request"));
        ObjectNode local = ann.awaitType("state_snapshot", WAIT);
        assertThat(claimedTasks(local)).contains("Q1");
        assertThat(local.path("staleness").path("isStale").asBoolean(false)).isTrue();
        assertThat(local.path("staleness").has("consistency")).isFalse();
    }
}
