package dev.synapsehub.net;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.net.protocol.Outbox;
import dev.synapsehub.net.session.Session;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A connection's answers go back in the order of its requests (contract §4.3: each frame is
 * answered before the next is read; an error carries nothing that names its request): an error
 * the edge answers at once for a later frame waits for the writer's answer to an earlier one.
 * The writer's answer is held back by holding the hub's publishing (outbox) thread.
 */
class EdgeAnswerOrderWireTest {

    @Test
    void anEdgeErrorForALaterFrameFollowsTheReplyToAnEarlierOne() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient alpha = hub.agent("p/alpha");
            Outbox outbox = hub.server.services().outbox();
            CountDownLatch release = hold(outbox);
            try {
                alpha.send(alpha.frame("state_request")); // answered through the writer, then the outbox
                alpha.sendText("{not json"); // answered by the edge, on the connection's loop
                awaitErrorRead(hub, alpha);
            } finally {
                release.countDown();
            }
            alpha.awaitType("error", WAIT);
            alpha.awaitType("state_snapshot", WAIT);
            assertThat(types(alpha, "state_snapshot", "error")).containsExactly("state_snapshot", "error");
        }
    }

    @Test
    void anEdgeErrorFollowsABroadcastReplyStillWaitingToBeHandedToTheLoops() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient alpha = hub.agent("p/alpha");
            Outbox outbox = hub.server.services().outbox();
            CountDownLatch first = hold(outbox);
            CountDownLatch second;
            try {
                ObjectNode claim = alpha.frame("claim");
                claim.put("task_id", "T1").put("worktree", "w");
                claim.putArray("paths").add("src");
                alpha.send(claim);
                await(() -> outbox.queuedTasks() >= 1); // the claim's answer waits for the outbox thread
                second = new CountDownLatch(1);
                CountDownLatch secondHolds = new CountDownLatch(1);
                outbox.executor().execute(() -> { // queued behind the answer, ahead of its batch's hand-over
                    secondHolds.countDown();
                    awaitQuietly(second);
                });
                first.countDown();
                assertThat(secondHolds.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
                // the answer was published (claim_granted, a broadcast), its batch not yet handed to the loops
                alpha.sendText("{not json");
                awaitErrorRead(hub, alpha);
            } finally {
                first.countDown();
            }
            second.countDown();
            alpha.awaitType("error", WAIT);
            alpha.awaitType("claim_granted", WAIT);
            assertThat(types(alpha, "claim_granted", "error")).containsExactly("claim_granted", "error");
        }
    }

    /** Until the hub read the malformed frame: its error either waits for earlier answers or was sent. */
    private static void awaitErrorRead(TestHub hub, HubClient alpha) throws InterruptedException {
        Session session = hub.server.services().registry().session("p/alpha");
        await(() -> !session.answers().tail().isDone()
                || alpha.received().stream().anyMatch(f -> "error".equals(f.path("type").asText())));
    }

    /** Holds the outbox thread until the returned latch is counted down. */
    private static CountDownLatch hold(Outbox outbox) throws InterruptedException {
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        outbox.executor().execute(() -> {
            held.countDown();
            awaitQuietly(release);
        });
        assertThat(held.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        return release;
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Waits (bounded) until {@code condition} holds. */
    private static void await(BooleanSupplier condition) throws InterruptedException {
        long end = System.nanoTime() + WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("waited too long").isLessThan(end);
            Thread.sleep(1);
        }
    }

    /** The types among {@code of} that {@code client} received, in the order received. */
    private static List<String> types(HubClient client, String... of) {
        List<String> wanted = List.of(of);
        return client.received().stream().map(f -> f.path("type").asText()).filter(wanted::contains).toList();
    }
}
