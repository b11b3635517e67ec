package dev.synapsehub.mesh;

import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.Outcome;
import dev.synapsehub.core.command.IdentityPinCommand;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static dev.synapsehub.mesh.MeshReplicationTest.claim;
import static dev.synapsehub.mesh.MeshReplicationTest.submit;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A committed record this node's edge cannot take (its edge effects, or another node's decision
 * to publish) is logged once, counted, and does not stop the node applying the log (issue 11).
 */
class MeshEdgeFailuresTest {
    @TempDir
    Path dir;
    private TestCluster cluster;

    @AfterEach
    void stop() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    /** The node's /metrics figures, as MeshFace writes them. */
    private static String metrics(MeshNode node) {
        StringBuilder out = new StringBuilder();
        new MeshFace(node).appendMetrics(out);
        return out.toString();
    }

    /**
     * A node cut off while an identity pin was reclaimed and the log compacted past it learns of
     * the reclaim only from the leader's snapshot; an edge that cannot end that pin is counted.
     */
    @Test
    void pinsAnInstalledSnapshotEndsThatTheEdgeCannotEndAreCountedOnMetrics() throws Exception {
        cluster = TestCluster.partitionable(dir, 3, new MeshCompaction(8, 8 << 10));
        MeshNode leader = cluster.awaitLeader();
        MeshNode holder = cluster.follower(leader);
        AgentKey ann = AgentKey.generate();
        Outcome pinned = submit(leader, Mutation.of(new IdentityPinCommand.Pin("p/ann", ann.keyId, ann.publicKey)));
        assertThat(pinned).isInstanceOf(Outcome.Decided.class);
        TestCluster.await("the pin reached the holder's node", () -> holder.actor().committedPin("p/ann").isPresent());
        long cutAt = holder.status().appliedIndex();
        long installedBefore = holder.snapshotStatus().loadedIndex();
        cluster.links().isolate(holder.nodeId());

        Outcome reclaimed = submit(leader, Mutation.of(new IdentityPinCommand.Reclaim("ops/root", "p/ann", ann.keyId,
                "laptop lost", true, false, false, false, "kid-root")));
        assertThat(reclaimed).isInstanceOf(Outcome.Decided.class);
        assertThat(leader.actor().committedPin("p/ann")).isEmpty();
        for (int i = 0; i < 200 && leader.snapshotStatus().logStartIndex() <= cutAt + 1; i++) {
            submit(leader, Mutation.of(claim("load", "L" + i)));
        }
        TestCluster.await("the leader compacted past the cut-off node",
                () -> leader.snapshotStatus().logStartIndex() > cutAt + 1);

        cluster.edge(holder.nodeId()).pinEndsFailing = true;
        cluster.links().healAll();
        long seq = leader.status().appliedSeq();
        TestCluster.await("the cut-off node catches up", () -> holder.status().appliedSeq() >= seq);
        assertThat(holder.snapshotStatus().loadedIndex()).as("it installed the leader's snapshot")
                .isGreaterThan(Math.max(cutAt, installedBefore));
        assertThat(holder.actor().committedPin("p/ann")).as("the reclaim reached it in the snapshot").isEmpty();
        TestCluster.await("the pin end the edge refused is counted", () -> holder.edgeFailures().edgeEffects() == 1);
        assertThat(holder.edgeFailures()).isEqualTo(new MeshNode.EdgeFailures(1, 0));
        assertThat(metrics(holder)).contains("\nsynapse_mesh_edge_effect_failures_total 1\n");
    }

    @Test
    void eachRecordAndDecisionAFailingEdgeCannotTakeIsCountedOnMetrics() throws Exception {
        cluster = new TestCluster(dir, 3);
        MeshNode leader = cluster.awaitLeader();
        MeshNode broken = cluster.follower(leader);
        cluster.edge(broken.nodeId()).failing = true;

        long seq = 0;
        for (int i = 0; i < 2; i++) {
            Outcome granted = submit(leader, new Mutation(claim("erin", "E" + i), null, new TestEdge.Verb("claim")));
            assertThat(granted).isInstanceOf(Outcome.Decided.class);
            seq = OutcomeCodec.lastSeq(granted);
        }
        cluster.awaitApplied(seq); // the failures stopped nothing: the broken node applied both records

        TestCluster.await("both counted", () -> broken.edgeFailures().remotePublishes() == 2);
        assertThat(broken.edgeFailures()).isEqualTo(new MeshNode.EdgeFailures(2, 2));
        assertThat(metrics(broken)).contains("\nsynapse_mesh_edge_effect_failures_total 2\n")
                .contains("\nsynapse_mesh_remote_publish_failures_total 2\n");
        assertThat(cluster.edge(broken.nodeId()).published).isEmpty();

        for (MeshNode n : cluster.running()) {
            if (n != broken) {
                assertThat(n.edgeFailures()).as(n.nodeId()).isEqualTo(new MeshNode.EdgeFailures(0, 0));
                assertThat(metrics(n)).contains("\nsynapse_mesh_edge_effect_failures_total 0\n")
                        .contains("\nsynapse_mesh_remote_publish_failures_total 0\n");
            }
        }
    }
}
