package dev.synapsehub.net;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.net.protocol.BusyReason;
import dev.synapsehub.net.protocol.HubMetrics;
import dev.synapsehub.net.protocol.Outbox;
import io.netty.channel.EventLoop;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Admission by fan-out work on a real hub ({@code --max-fanout-delay-ms}, {@code --max-fanout-writes}):
 * an I/O loop that is behind on its broadcasts (held here by a task, as a long pass over
 * thousands of sockets holds it) makes the hub answer busy, with its reason counted and
 * {@code /health} degraded, while the backlog in bytes is a few hundred; the requester's own
 * grant is not held up by it, the refusal changes nothing, and the hub recovers once the loop
 * has caught up.
 */
class FanoutAdmissionTest {
    private static final Duration BOUND = Duration.ofMillis(300);

    @Test
    void aBroadcastWaitingLongerThanTheDelayBoundMakesTheHubAnswerBusyUntilItsLoopCatchesUp() throws Exception {
        try (TestHub hub = new TestHub(HubConfig.builder().ioLoops(2).metricsEnabled(true).maxFanoutDelay(BOUND))) {
            HubClient alpha = hub.agent("p/alpha");
            OtherLoop other = membersOnAnotherLoop(hub, "p/alpha", 1);
            HubMetrics metrics = hub.server.services().metrics();
            CountDownLatch release = other.hold();
            try {
                alpha.send(claim(alpha, "T1", "src/a"));
                // the requester's grant is written on its own loop at once, the other loop held or not
                assertThat(alpha.awaitType("claim_granted", WAIT).path("task_id").asText()).isEqualTo("T1");
                awaitFanout(hub, o -> o.oldestUndeliveredNanos(System.nanoTime()) > BOUND.toNanos());
                assertThat(metrics.fanoutBacklogBytes.get()).as("the bytes bound is nowhere near")
                        .isPositive().isLessThan(64L * 1024);

                refusedTwice(alpha);
                assertThat(metrics.busyRefusals(BusyReason.FANOUT_DELAY)).isEqualTo(2);
                assertThat(metrics.busyRefusals(BusyReason.FANOUT_WRITES)).isZero();
                assertThat(metrics.busyRefusals(BusyReason.FANOUT_BACKLOG)).isZero();
                assertThat(metrics.busyRefusals(BusyReason.OUTBOX_QUEUE)).isZero();
                assertThat(metrics.fanoutBusyRefusals.get()).isEqualTo(2);

                JsonNode health = HealthTest.healthBody(onFreeLoop(hub, "/health"));
                assertThat(health.path("status").asText()).isEqualTo("degraded");
                assertThat(health.path("reasons").toString()).contains("fanout_delayed")
                        .doesNotContain("fanout_backlogged").doesNotContain("fanout_writes_backlogged");
                String text = onFreeLoop(hub, "/metrics");
                assertThat(text).contains("synapse_admission_busy_refusals_total{reason=\"fanout_delay\"} 2")
                        .contains("synapse_admission_busy_refusals_total{reason=\"fanout_backlog\"} 0")
                        .contains("synapse_fanout_busy_refusals_total 2");
                assertThat(sample(text, "synapse_fanout_oldest_undelivered_seconds")).as("the gauge measures the wait")
                        .isGreaterThan(BOUND.toMillis() / 1000.0);
            } finally {
                release.countDown();
            }
            recovers(hub, alpha, other.members.get(0));
        }
    }

    @Test
    void moreWritesOwedThanTheWritesBoundMakeTheHubAnswerBusyBeforeAnyBroadcastIsLate() throws Exception {
        // one write per member per batch: one grant for two members on a held loop owes two
        HubConfig.Builder config = HubConfig.builder().ioLoops(2).metricsEnabled(true).maxFanoutWrites(1)
                .maxFanoutDelay(Duration.ofMinutes(10));
        try (TestHub hub = new TestHub(config)) {
            HubClient alpha = hub.agent("p/alpha");
            OtherLoop other = membersOnAnotherLoop(hub, "p/alpha", 2);
            HubMetrics metrics = hub.server.services().metrics();
            CountDownLatch release = other.hold();
            try {
                alpha.send(claim(alpha, "T1", "src/a"));
                assertThat(alpha.awaitType("claim_granted", WAIT).path("task_id").asText()).isEqualTo("T1");
                awaitFanout(hub, o -> o.writesOwed() >= 2);

                refusedTwice(alpha);
                assertThat(metrics.busyRefusals(BusyReason.FANOUT_WRITES)).isEqualTo(2);
                assertThat(metrics.busyRefusals(BusyReason.FANOUT_DELAY)).isZero();
                assertThat(metrics.fanoutBusyRefusals.get()).isEqualTo(2);

                JsonNode health = HealthTest.healthBody(onFreeLoop(hub, "/health"));
                assertThat(health.path("status").asText()).isEqualTo("degraded");
                assertThat(health.path("reasons").toString()).contains("fanout_writes_backlogged")
                        .doesNotContain("fanout_delayed");
                String text = onFreeLoop(hub, "/metrics");
                assertThat(text).contains("synapse_admission_busy_refusals_total{reason=\"fanout_writes\"} 2");
                assertThat(sample(text, "synapse_fanout_writes_owed")).isGreaterThanOrEqualTo(2);
            } finally {
                release.countDown();
            }
            recovers(hub, alpha, other.members.get(0));
        }
    }

    /** Members whose I/O loop is not the requester's: holding it leaves the requester's free. */
    private record OtherLoop(EventLoop loop, List<HubClient> members) {
        /** Holds the loop with a task until the returned latch is counted down (at most 20 s). */
        CountDownLatch hold() throws InterruptedException {
            CountDownLatch held = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            loop.execute(() -> {
                held.countDown();
                try {
                    release.await(20, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            assertThat(held.await(5, TimeUnit.SECONDS)).isTrue();
            return release;
        }
    }

    /**
     * Connects agents until {@code count} of them share an I/O loop other than {@code requester}'s
     * (the hub here runs two loops, whatever the cores, and hands connections out in turn), then waits until the
     * broadcasts of their joins are out.
     */
    private static OtherLoop membersOnAnotherLoop(TestHub hub, String requester, int count) throws Exception {
        EventLoop requesterLoop = loopOf(hub, requester);
        List<HubClient> found = new ArrayList<>();
        EventLoop other = null;
        for (int i = 0; i < 16 && found.size() < count; i++) {
            String name = "p/member-" + i;
            HubClient member = hub.agent(name);
            EventLoop loop = loopOf(hub, name);
            if (loop != requesterLoop && (other == null || loop == other)) {
                other = loop;
                found.add(member);
            }
        }
        assertThat(found).as("members on the second of the hub's two I/O loops").hasSize(count);
        hub.awaitBroadcastsHandedOut();
        awaitFanout(hub, o -> o.writesOwed() == 0 && o.oldestUndeliveredNanos(System.nanoTime()) == 0);
        return new OtherLoop(other, found);
    }

    /** A claim and a query from {@code alpha} are both answered busy. */
    private static void refusedTwice(HubClient alpha) throws Exception {
        alpha.send(claim(alpha, "T2", "src/b"));
        assertThat(alpha.awaitType("error", WAIT).path("error_code").asText()).isEqualTo("busy");
        alpha.send(alpha.frame("state_request")); // a query is work for the outbox thread too
        assertThat(alpha.awaitType("error", WAIT).path("error_code").asText()).isEqualTo("busy");
    }

    /** Once the held loop runs: its member gets the grant, nothing waits, health clears, T2 is granted. */
    private static void recovers(TestHub hub, HubClient alpha, HubClient member) throws Exception {
        assertThat(member.awaitType("claim_granted", WAIT).path("task_id").asText()).isEqualTo("T1");
        awaitFanout(hub, o -> o.writesOwed() == 0 && o.oldestUndeliveredNanos(System.nanoTime()) == 0);
        JsonNode after = HealthTest.healthBody(HttpGet.body(hub.port, "/health"));
        assertThat(after.path("reasons").toString()).doesNotContain("fanout_delayed")
                .doesNotContain("fanout_writes_backlogged");
        JsonNode claims = TestHub.state(alpha).path("snapshot").path("active_claims");
        assertThat(claims.toString()).contains("T1").doesNotContain("T2"); // the refusal changed nothing
        alpha.send(claim(alpha, "T2", "src/b"));
        assertThat(alpha.awaitType("claim_granted", WAIT).path("task_id").asText()).isEqualTo("T2");
        assertThat(hub.server.services().metrics().fanoutBusyRefusals.get()).isEqualTo(2);
    }

    private static EventLoop loopOf(TestHub hub, String name) {
        return hub.server.services().registry().session(name).channel().eventLoop();
    }

    private static void awaitFanout(TestHub hub, Predicate<Outbox> until) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!until.test(hub.server.services().outbox())) {
            assertThat(System.nanoTime()).as("the fan-out's state within %s", WAIT).isLessThan(deadline);
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

    private static double sample(String metrics, String name) {
        for (String line : metrics.split("\n")) {
            if (line.startsWith(name + " ")) {
                return Double.parseDouble(line.substring(line.indexOf(' ') + 1).trim());
            }
        }
        throw new AssertionError("no " + name + " in /metrics");
    }

    private static ObjectNode claim(HubClient c, String task, String path) {
        ObjectNode f = c.frame("claim");
        f.put("task_id", task).put("worktree", "wt").put("ttl_seconds", 600);
        ArrayNode paths = f.putArray("paths");
        paths.add(path);
        return f;
    }
}
