package dev.synapsehub.mesh;

import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.Outcome;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static dev.synapsehub.mesh.MeshReplicationTest.claim;
import static dev.synapsehub.mesh.MeshReplicationTest.submit;
import static org.assertj.core.api.Assertions.assertThat;

/** Mesh figures on {@code /metrics}: each node reports its own measured Raft position. */
class MeshMetricsTest {
    @TempDir
    Path dir;
    private TestCluster cluster;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    @AfterEach
    void stop() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    private String metrics(String id) throws Exception {
        URI uri = URI.create("http://127.0.0.1:" + cluster.uri(id).getPort() + "/metrics");
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(20)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(200);
        return r.body();
    }

    private static long value(String text, String series) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(series) + " (-?\\d+(?:\\.\\d+)?)$").matcher(text);
        assertThat(m.find()).as(series + " in\n" + text).isTrue();
        return (long) Double.parseDouble(m.group(1));
    }

    @Test
    void everyNodeReportsItsTermIndicesRoleSnapshotsAndTheLeaderItsFollowersLag() throws Exception {
        cluster = new TestCluster(dir, 3, true, 0, new MeshCompaction(4, 8 << 10));
        MeshNode leader = cluster.awaitLeader();
        long seq = 0;
        for (int i = 0; i < 10; i++) {
            seq = OutcomeCodec.lastSeq(submit(i % 2 == 0 ? leader : cluster.follower(leader),
                    Mutation.of(claim("m", "M" + i))));
        }
        cluster.awaitApplied(seq);
        for (MeshNode n : cluster.running()) {
            TestCluster.await(n.nodeId() + " snapshotted", () -> n.snapshotStatus().lastSnapshotIndex() > 0);
        }
        // every follower has replicated everything committed: the leader reports each lag as 0
        long commit = leader.status().commitIndex();
        TestCluster.await("followers matched", () -> leader.status().peerMatchIndex().size() == 2
                && leader.status().peerMatchIndex().values().stream().allMatch(i -> i >= commit));

        for (MeshNode n : cluster.running()) {
            String text = metrics(n.nodeId());
            MeshStatus s = n.status();
            assertThat(value(text, "synapse_mesh_leader")).as(n.nodeId()).isEqualTo(n == leader ? 1 : 0);
            assertThat(value(text, "synapse_mesh_term")).isEqualTo(s.term());
            assertThat(value(text, "synapse_mesh_applied_seq")).isEqualTo(seq);
            assertThat(value(text, "synapse_mesh_applied_index")).isPositive()
                    .isLessThanOrEqualTo(value(text, "synapse_mesh_commit_index"));
            assertThat(value(text, "synapse_mesh_quorum")).isEqualTo(2);
            assertThat(value(text, "synapse_mesh_last_snapshot_index")).isPositive()
                    .isLessThanOrEqualTo(value(text, "synapse_mesh_applied_index"));
            assertThat(value(text, "synapse_mesh_snapshots_taken_total")).isPositive();
            assertThat(value(text, "synapse_mesh_snapshots_corrupt_total")).isZero();
            if (n == leader) {
                for (MeshNode f : cluster.running()) {
                    if (f != leader) {
                        assertThat(value(text, "synapse_mesh_peer_lag_entries{peer=\"" + f.nodeId() + "\"}"))
                                .isGreaterThanOrEqualTo(0);
                    }
                }
            } else {
                assertThat(text).doesNotContain("synapse_mesh_peer_lag_entries{");
            }
            assertThat(text).contains("synapse_up 1"); // the hub's own families are still there
        }

        // a follower that stops falls behind: the leader's figure for it grows with what commits
        MeshNode gone = cluster.follower(leader);
        cluster.stop(gone.nodeId());
        for (int i = 0; i < 3; i++) {
            Outcome o = submit(leader, Mutation.of(claim("m", "L" + i)));
            assertThat(((Outcome.Decided) o).reply().granted()).isTrue();
        }
        String text = metrics(leader.nodeId());
        assertThat(value(text, "synapse_mesh_peer_lag_entries{peer=\"" + gone.nodeId() + "\"}")).isGreaterThan(0);
    }
}
