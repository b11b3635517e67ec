package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.Outcome;
import dev.synapsehub.core.command.ReleaseCommand;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static dev.synapsehub.mesh.MeshReplicationTest.claim;
import static dev.synapsehub.mesh.MeshReplicationTest.submit;
import static dev.synapsehub.mesh.MeshWireTest.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Seed 001 §8 and §12 against a deposed leader that still believes it leads: cut off from the
 * others, it keeps its role until its election timeout runs out, while the others elect a leader
 * and commit. Asked then, it must neither label a read linearizable nor answer a decision that
 * produced no events (a refusal from its state): both come from a state that misses what the new
 * leader committed. It answers the documented retry shapes instead ({@code busy}). The node
 * deposed here steps down only after 30 s without a majority (its election timeout's upper end),
 * so the test asks it well inside that window, whatever the host's load.
 */
class MeshDeposedLeaderTest {
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

    @Test
    void aDeposedLeaderThatStillBelievesItLeadsNeitherReadsLinearizableNorAnswersADecisionWithoutEvents()
            throws Exception {
        cluster = TestCluster.partitionable(dir, 3, true);
        MeshNode first = cluster.awaitLeader();
        String oldId = cluster.follower(first).nodeId();
        // heartbeats every 150 ms as usual, but a step-down only after 30 s without a majority
        cluster.elections(oldId, Duration.ofMillis(300), Duration.ofSeconds(30));
        cluster.stop(oldId);
        MeshNode old = cluster.start(oldId);
        assertThat(old.awaitCaughtUp(30_000)).isTrue();
        MeshAdmin.transferLeader(old.config().peers(), oldId, Duration.ofSeconds(30));
        TestCluster.await("the slow node leads", old::decides);

        assertThat(submit(old, Mutation.of(claim("ann", "X")))).isInstanceOf(Outcome.Decided.class);
        HubClient lea = HubClient.connect(cluster.uri(oldId), WAIT);
        clients.add(lea);
        lea.register("lea", null, WAIT);
        lea.send(linearizable(lea));
        assertThat(owners(lea.awaitType("state_snapshot", WAIT))).as("read while it leads").containsExactly("ann");

        cluster.links().isolate(oldId);
        MeshNode[] next = new MeshNode[1];
        TestCluster.await("the others elect a leader", () -> {
            for (MeshNode n : cluster.running()) {
                if (n != old && n.decides()) {
                    next[0] = n;
                    return true;
                }
            }
            return false;
        });
        // the new leader commits: ann's claim released, bob's granted (both acknowledged)
        assertThat(submit(next[0], Mutation.of(new ReleaseCommand("ann", "X", null)))).isInstanceOf(Outcome.Decided.class);
        assertThat(submit(next[0], Mutation.of(claim("bob", "X")))).isInstanceOf(Outcome.Decided.class);
        assertThat(old.decides()).as("the cut-off node still believes it leads (the premise)").isTrue();

        lea.clearPending();
        lea.send(linearizable(lea));
        ObjectNode read = lea.await(f -> "error".equals(f.path("type").asText())
                || "state_snapshot".equals(f.path("type").asText()), WAIT);
        assertThat(read.path("type").asText()).as("a linearizable read on the deposed leader: " + read)
                .isEqualTo("error");
        assertThat(read.path("error_code").asText()).isEqualTo("busy");
        assertThat(read.path("payload").asText()).contains("nothing was read");

        // bob owns X now; the deposed leader's state still says ann: its refusal would be a stale decision
        Outcome release = submit(old, Mutation.of(new ReleaseCommand("bob", "X", null)));
        assertThat(release).as("a decision without events on the deposed leader: " + release)
                .isInstanceOf(Outcome.Refused.class);
        assertThat(((Outcome.Refused) release).reason()).isEqualTo(Outcome.Reason.BUSY);
        assertThat(((Outcome.Refused) release).message()).contains("could not confirm it still leads");
        assertThat(old.decides()).as("all of it answered while the node still believed it leads").isTrue();
    }

    private static ObjectNode linearizable(HubClient c) {
        ObjectNode f = c.frame("state_request");
        f.put("consistency", "linearizable");
        return f;
    }

    private static List<String> owners(JsonNode stateSnapshot) {
        List<String> owners = new ArrayList<>();
        stateSnapshot.path("snapshot").path("active_claims").forEach(c -> owners.add(c.path("owner").asText()));
        return owners;
    }
}
