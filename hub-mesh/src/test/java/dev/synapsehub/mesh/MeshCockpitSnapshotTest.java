package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.synapsehub.core.actor.Idempotency;
import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.Outcome;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static dev.synapsehub.mesh.MeshReplicationTest.claim;
import static dev.synapsehub.mesh.MeshReplicationTest.claims;
import static dev.synapsehub.mesh.MeshReplicationTest.submit;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A mesh follower cut off while the leader compacted its log catches up by installing a
 * snapshot; the cockpit open on that follower is told to reload (an installed snapshot carries no
 * events, so the live feed alone would leave the page showing the old state), and its views then
 * show the installed state.
 */
class MeshCockpitSnapshotTest {
    /** A snapshot every 8 entries, 8 KiB log segments: a few dozen claims compact the log. */
    private static final MeshCompaction SMALL = new MeshCompaction(8, 8 << 10);
    private static final Duration LIVE = Duration.ofSeconds(60);
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;
    private TestCluster cluster;
    private final HttpClient http = HttpClient.newHttpClient();

    @AfterEach
    void stop() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void aFollowerThatInstallsASnapshotTellsItsOpenCockpitPagesToReloadAndShowsTheInstalledState() throws Exception {
        cluster = TestCluster.partitionable(dir, 3, SMALL, (id, db, base) -> base.ui(true));
        MeshNode leader = cluster.awaitLeader();
        MeshNode follower = cluster.follower(leader);
        String id = follower.nodeId();
        cluster.awaitApplied(grant(leader, "A", 2));
        String cockpit = "http://127.0.0.1:" + cluster.hub(id).port() + "/ui/api/";
        assertThat(view(cockpit + "claims").path("total").asInt()).isEqualTo(2);

        BlockingQueue<String[]> events = stream(cockpit + "events");
        next(events, "hello");
        long cutAt = follower.status().appliedIndex();
        long installedBefore = follower.snapshotStatus().loadedIndex();
        cluster.links().isolate(id);
        long seq = grant(leader, "B", 60);
        TestCluster.await("the leader compacted past the cut-off follower", () ->
                leader.snapshotStatus().logStartIndex() > cutAt + 1);
        assertThat(view(cockpit + "claims").path("total").asInt()).as("the cut-off follower shows what it had")
                .isEqualTo(2);

        cluster.links().healAll();
        TestCluster.await("the follower catches up", () -> follower.status().appliedSeq() >= seq);
        assertThat(follower.snapshotStatus().loadedIndex()).as("it caught up by installing the leader's snapshot")
                .isGreaterThan(Math.max(installedBefore, cutAt + 1));
        String[] resync = next(events, "resync");
        assertThat(JSON.readTree(resync[1]).path("reason").asText()).isEqualTo("state_replaced");
        JsonNode shown = view(cockpit + "claims?limit=500");
        assertThat(shown.path("total").asInt()).as("the views show the installed state").isEqualTo(claims(leader).size())
                .isEqualTo(62);
        assertThat(view(cockpit + "overview").path("feed").path("states_replaced").asLong()).isPositive();
    }

    /** Grants {@code count} fresh keyed tasks through {@code node} (a retry is safe); returns the last seq. */
    private static long grant(MeshNode node, String prefix, int count) throws Exception {
        long seq = 0;
        for (int i = 0; i < count; i++) {
            String task = prefix + i;
            TestEdge.Verb verb = new TestEdge.Verb("claim");
            Idempotency key = new Idempotency(Idempotency.key("cockpit", "claim", task), "digest-" + task,
                    TestEdge.renderer(verb));
            Outcome o = null;
            for (int attempt = 0; attempt < 10 && !(o instanceof Outcome.Decided || o instanceof Outcome.Replayed);
                 attempt++) {
                o = submit(node, new Mutation(claim("cockpit", task), key, verb));
            }
            if (o instanceof Outcome.Replayed) {
                seq = node.status().appliedSeq();
            } else {
                assertThat(o).as(task).isInstanceOf(Outcome.Decided.class);
                seq = OutcomeCodec.lastSeq(o);
            }
        }
        return seq;
    }

    private JsonNode view(String url) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(20))
                .build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return JSON.readTree(r.body());
    }

    /** The event stream's {event, data} pairs, read on a daemon thread until the stream closes. */
    private BlockingQueue<String[]> stream(String url) throws Exception {
        HttpResponse<InputStream> r = http.send(HttpRequest.newBuilder(URI.create(url)).build(),
                HttpResponse.BodyHandlers.ofInputStream());
        assertThat(r.statusCode()).isEqualTo(200);
        BlockingQueue<String[]> out = new LinkedBlockingQueue<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(r.body(), StandardCharsets.UTF_8))) {
                String event = "message";
                for (String line; (line = in.readLine()) != null; ) {
                    if (line.startsWith("event: ")) {
                        event = line.substring(7);
                    } else if (line.startsWith("data: ")) {
                        out.add(new String[] {event, line.substring(6)});
                    } else if (line.isEmpty()) {
                        event = "message";
                    }
                }
            } catch (Exception e) {
                // the stream closed: the test is over
            }
        }, "cockpit-stream-reader");
        reader.setDaemon(true);
        reader.start();
        return out;
    }

    private static String[] next(BlockingQueue<String[]> events, String event) throws InterruptedException {
        long deadline = System.nanoTime() + LIVE.toNanos();
        for (int i = 0; i < 100_000; i++) {
            long left = deadline - System.nanoTime();
            String[] e = left <= 0 ? null : events.poll(left, TimeUnit.NANOSECONDS);
            assertThat(e).as("a '" + event + "' event on the cockpit stream within " + LIVE).isNotNull();
            if (e[0].equals(event)) {
                return e;
            }
        }
        throw new AssertionError("no '" + event + "' event among 100,000");
    }
}
