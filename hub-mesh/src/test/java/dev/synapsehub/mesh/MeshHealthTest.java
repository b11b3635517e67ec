package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.JsonNode;
import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.Outcome;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static dev.synapsehub.mesh.MeshReplicationTest.claim;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A mesh node's {@code /health} tells the truth about the node, not only about its actor: failed
 * (503) once it stopped deciding for good, degraded while it knows no leader for longer than an
 * election's worth of time or while its snapshots cannot be written, ok again when that ends.
 */
class MeshHealthTest {
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

    private record Health(int code, String status, String reasons) {
    }

    private HttpResponse<String> get(String id, String path) throws Exception {
        URI uri = URI.create("http://127.0.0.1:" + cluster.uri(id).getPort() + path);
        return http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(20)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private Health health(String id) throws Exception {
        HttpResponse<String> r = get(id, "/health");
        JsonNode body = MeshJson.MAPPER.readTree(r.body());
        return new Health(r.statusCode(), body.path("status").asText(), body.path("reasons").toString());
    }

    private String metrics(String id) throws Exception {
        HttpResponse<String> r = get(id, "/metrics");
        assertThat(r.statusCode()).isEqualTo(200);
        return r.body();
    }

    /** Polls node {@code id}'s /health until its status is {@code status} (30 s at most). */
    private void awaitStatus(String id, String status) throws InterruptedException {
        Object[] last = new Object[1];
        try {
            TestCluster.await(id + " /health " + status, () -> {
                try {
                    Health h = health(id);
                    last[0] = h;
                    return h.status().equals(status);
                } catch (Exception e) {
                    last[0] = e;
                    return false;
                }
            });
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; last answer: " + last[0], e);
        }
    }

    private static boolean granted(MeshNode via, String agent, String task) throws Exception {
        Outcome o = via.actor().submit(Mutation.of(claim(agent, task))).get(30, TimeUnit.SECONDS);
        return o instanceof Outcome.Decided d && d.reply().granted();
    }

    @Test
    void aNodeThatCannotApplyACommittedRecordIsReportedFailedWith503() throws Exception {
        cluster = new TestCluster(dir, 3, true);
        MeshNode leader = cluster.awaitLeader();
        MeshNode broken = cluster.follower(leader);
        awaitStatus(broken.nodeId(), "ok");
        assertThat(metrics(broken.nodeId())).contains("synapse_mesh_deciding 1\n");

        broken.tapApply(() -> {
            throw new IllegalStateException("injected: this node cannot apply");
        });
        assertThat(granted(leader, "p/a", "A1")).isTrue(); // committed with the third node; the broken one fails it
        TestCluster.await("the broken node stops deciding", () -> broken.site().failure() != null);

        Health h = health(broken.nodeId());
        assertThat(h.code()).as("a probe acts on it").isEqualTo(503);
        assertThat(h.status()).isEqualTo("failed");
        assertThat(h.reasons()).contains("\"mesh_node_failed\"").doesNotContain("mesh_no_leader");
        assertThat(metrics(broken.nodeId())).contains("synapse_mesh_deciding 0\n")
                .contains("synapse_health_status{status=\"failed\"} 1\n");
    }

    @Test
    void aNodeThatKnowsNoLeaderForLongerThanAnElectionIsDegradedUntilOneIsElected() throws Exception {
        cluster = new TestCluster(dir, 3, true);
        MeshNode leader = cluster.awaitLeader();
        MeshNode lone = cluster.follower(leader);
        String other = cluster.running().stream().filter(n -> n != leader && n != lone).findFirst().orElseThrow()
                .nodeId();
        awaitStatus(lone.nodeId(), "ok");

        cluster.stop(leader.nodeId());
        cluster.stop(other); // one of three: no quorum, no leader
        awaitStatus(lone.nodeId(), "degraded");
        Health h = health(lone.nodeId());
        assertThat(h.code()).as("it still serves its agents (their writes are queued)").isEqualTo(200);
        assertThat(h.reasons()).contains("\"mesh_no_leader\"");
        assertThat(metrics(lone.nodeId())).contains("synapse_mesh_deciding 0\n");

        cluster.start(other); // a quorum again: a leader is elected
        cluster.awaitLeader();
        awaitStatus(lone.nodeId(), "ok");
        assertThat(metrics(lone.nodeId())).contains("synapse_mesh_deciding 1\n");
    }

    @Test
    void aNodeWhoseSnapshotsCannotBeWrittenIsDegradedUntilOneIsWritten() throws Exception {
        cluster = new TestCluster(dir, 3, true, 0, new MeshCompaction(8, 8 << 10));
        MeshNode leader = cluster.awaitLeader();
        MeshNode node = cluster.follower(leader);
        awaitStatus(node.nodeId(), "ok");
        Path sm = stateMachineDir(node.nodeId());
        Path aside = sm.resolveSibling("sm.aside");
        Files.move(sm, aside);
        Files.createFile(sm); // a file where the snapshots go: the next one cannot be written
        int task = 0;
        for (int round = 0; round < 20 && node.snapshotStatus().failed() == 0; round++) {
            for (int i = 0; i < 8; i++) {
                assertThat(granted(leader, "p/s", "S" + task++)).isTrue();
            }
        }
        TestCluster.await("a snapshot failed on " + node.nodeId(), () -> node.snapshotStatus().failing());
        Health h = health(node.nodeId());
        assertThat(h.code()).isEqualTo(200);
        assertThat(h.status()).isEqualTo("degraded");
        assertThat(h.reasons()).contains("\"mesh_snapshot_failing\"");

        Files.delete(sm);
        Files.move(aside, sm);
        long taken = node.snapshotStatus().taken();
        for (int round = 0; round < 20 && node.snapshotStatus().taken() == taken; round++) {
            for (int i = 0; i < 8; i++) {
                assertThat(granted(leader, "p/s", "S" + task++)).isTrue();
            }
        }
        TestCluster.await("a snapshot written on " + node.nodeId(), () -> !node.snapshotStatus().failing());
        awaitStatus(node.nodeId(), "ok");
    }

    /** Where node {@code id}'s Raft server keeps its snapshots (its state machine directory). */
    private Path stateMachineDir(String id) throws Exception {
        try (Stream<Path> files = Files.walk(dir.resolve(id + ".db.raft"))) {
            return files.filter(p -> Files.isDirectory(p) && p.getFileName().toString().equals("sm")).findFirst()
                    .orElseThrow();
        }
    }
}
