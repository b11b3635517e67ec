package dev.synapsehub.net;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.net.protocol.BusyReason;
import dev.synapsehub.net.protocol.HubMetrics;
import io.netty.channel.EventLoop;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Admission by fan-out delay ({@code --max-fanout-delay-ms}) on a real hub: an I/O loop that is
 * behind on its broadcasts (held here by a task, as a long pass over thousands of sockets holds
 * it) makes the hub answer busy, with its reason counted and {@code /health} degraded, while the
 * backlog in bytes is a few hundred; the requester's own grant is not held up by it, the refusal
 * changes nothing, and the hub recovers once the loop has caught up.
 */
class FanoutDelayAdmissionTest {
    private static final Duration BOUND = Duration.ofMillis(300);

    @Test
    void aLoopBehindOnItsBroadcastsMakesTheHubAnswerBusyForThatReasonUntilItCatchesUp() throws Exception {
        try (TestHub hub = new TestHub(HubConfig.builder().metricsEnabled(true).maxFanoutDelay(BOUND))) {
            HubClient alpha = hub.agent("p/alpha");
            EventLoop alphaLoop = loopOf(hub, "p/alpha");
            // the hub runs one I/O loop per core and hands connections out in turn: find a member
            // on the other one, so that holding its loop leaves alpha's free to read and answer
            HubClient beta = null;
            EventLoop betaLoop = null;
            for (int i = 0; i < 8 && beta == null; i++) {
                HubClient member = hub.agent("p/member-" + i);
                EventLoop loop = loopOf(hub, "p/member-" + i);
                if (loop != alphaLoop) {
                    beta = member;
                    betaLoop = loop;
                }
            }
            assertThat(beta).as("a member on a second I/O loop (the hub runs one per core)").isNotNull();
            hub.awaitBroadcastsHandedOut();
            HubMetrics metrics = hub.server.services().metrics();

            CountDownLatch held = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            betaLoop.execute(() -> {
                held.countDown();
                try {
                    release.await(20, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            try {
                assertThat(held.await(5, TimeUnit.SECONDS)).isTrue();
                alpha.send(claim(alpha, "T1", "src/a"));
                // the requester's grant is written on its own loop at once, beta's loop held or not
                assertThat(alpha.awaitType("claim_granted", WAIT).path("task_id").asText()).isEqualTo("T1");
                awaitOldestUndelivered(hub, age -> age > BOUND.toNanos());
                assertThat(metrics.fanoutBacklogBytes.get()).as("the bytes bound is nowhere near")
                        .isPositive().isLessThan(64L * 1024);

                alpha.send(claim(alpha, "T2", "src/b"));
                ObjectNode busy = alpha.awaitType("error", WAIT);
                assertThat(busy.path("error_code").asText()).isEqualTo("busy");
                alpha.send(alpha.frame("state_request")); // a query is work for the outbox thread too
                assertThat(alpha.awaitType("error", WAIT).path("error_code").asText()).isEqualTo("busy");
                assertThat(metrics.busyRefusals(BusyReason.FANOUT_DELAY)).isEqualTo(2);
                assertThat(metrics.busyRefusals(BusyReason.FANOUT_BACKLOG)).isZero();
                assertThat(metrics.busyRefusals(BusyReason.OUTBOX_QUEUE)).isZero();
                assertThat(metrics.fanoutBusyRefusals.get()).isEqualTo(2);

                JsonNode health = HealthTest.healthBody(onFreeLoop(hub, "/health"));
                assertThat(health.path("status").asText()).isEqualTo("degraded");
                assertThat(health.path("reasons").toString()).contains("fanout_delayed")
                        .doesNotContain("fanout_backlogged");
                String text = onFreeLoop(hub, "/metrics");
                assertThat(text).contains("synapse_admission_busy_refusals_total{reason=\"fanout_delay\"} 2")
                        .contains("synapse_admission_busy_refusals_total{reason=\"fanout_backlog\"} 0")
                        .contains("synapse_fanout_busy_refusals_total 2");
                assertThat(oldestSeconds(text)).as("the gauge measures the wait").isGreaterThan(BOUND.toMillis() / 1000.0);
            } finally {
                release.countDown();
            }

            // beta gets the grant once its loop runs again; then nothing waits and requests pass
            assertThat(beta.awaitType("claim_granted", WAIT).path("task_id").asText()).isEqualTo("T1");
            awaitOldestUndelivered(hub, age -> age == 0);
            JsonNode after = HealthTest.healthBody(HttpGet.body(hub.port, "/health"));
            assertThat(after.path("reasons").toString()).doesNotContain("fanout_delayed");
            JsonNode claims = TestHub.state(alpha).path("snapshot").path("active_claims");
            assertThat(claims.toString()).contains("T1").doesNotContain("T2"); // the refusal changed nothing
            alpha.send(claim(alpha, "T2", "src/b"));
            assertThat(alpha.awaitType("claim_granted", WAIT).path("task_id").asText()).isEqualTo("T2");
            assertThat(metrics.fanoutBusyRefusals.get()).isEqualTo(2);
        }
    }

    private static EventLoop loopOf(TestHub hub, String name) {
        return hub.server.services().registry().session(name).channel().eventLoop();
    }

    private static void awaitOldestUndelivered(TestHub hub, java.util.function.LongPredicate until)
            throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!until.test(hub.server.services().outbox().oldestUndeliveredNanos(System.nanoTime()))) {
            assertThat(System.nanoTime()).as("the fan-out's oldest wait within %s", WAIT).isLessThan(deadline);
            Thread.sleep(5);
        }
    }

    /**
     * {@code GET path}, retried on a new connection while one lands on the held loop (its answer
     * would come only after the release): connections are handed to the loops in turn.
     */
    private static String onFreeLoop(TestHub hub, String path) throws Exception {
        for (int i = 0; i < 4; i++) {
            String response = HttpGet.body(hub.port, path);
            if (!response.isEmpty()) {
                return response;
            }
        }
        throw new AssertionError("no answer to " + path + " from either loop");
    }

    private static double oldestSeconds(String metrics) {
        for (String line : metrics.split("\n")) {
            if (line.startsWith("synapse_fanout_oldest_undelivered_seconds ")) {
                return Double.parseDouble(line.substring(line.indexOf(' ') + 1).trim());
            }
        }
        throw new AssertionError("no synapse_fanout_oldest_undelivered_seconds in /metrics");
    }

    private static ObjectNode claim(HubClient c, String task, String path) {
        ObjectNode f = c.frame("claim");
        f.put("task_id", task).put("worktree", "wt").put("ttl_seconds", 600);
        ArrayNode paths = f.putArray("paths");
        paths.add(path);
        return f;
    }
}
