package dev.synapsehub.net;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** A stopping hub sends close 1001 and waits for the answers at most {@code --shutdown-close-timeout}. */
class ShutdownCloseTest {

    /** Closes the hub on a thread of its own; completes with how long {@link HubServer#close()} took, in ms. */
    private static CompletableFuture<Long> closeInBackground(TestHub hub) {
        return CompletableFuture.supplyAsync(() -> {
            long start = System.nanoTime();
            hub.server.close();
            return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        });
    }

    @Test
    void aPeerThatNeverAnswersIsDroppedAfterTheConfiguredBudget() throws Exception {
        TestHub hub = new TestHub(HubConfig.builder().shutdownCloseTimeout(Duration.ofMillis(1000)));
        try (RawWebSocket silent = new RawWebSocket(hub.port)) {
            CompletableFuture<Long> closing = closeInBackground(hub);
            RawWebSocket.Frame close = silent.awaitClose(); // read, never answered
            assertThat(close).isNotNull();
            assertThat(close.closeCode()).isEqualTo(1001);
            long took = closing.get(30, TimeUnit.SECONDS);
            // it waited for the answer (the lower bound), and gave up rather than waiting for ever; the
            // upper bound is loose: the rest of the close shares two cores with the other tests
            assertThat(took).isBetween(800L, 15_000L);
            assertThat(silent.read()).isNull(); // then TCP was closed
        } finally {
            hub.actor.close();
        }
    }

    @Test
    void aPeerThatAnswersEndsTheWaitAtOnce() throws Exception {
        TestHub hub = new TestHub(HubConfig.builder().shutdownCloseTimeout(Duration.ofSeconds(30)));
        try (RawWebSocket polite = new RawWebSocket(hub.port)) {
            CompletableFuture<Long> closing = closeInBackground(hub);
            assertThat(polite.awaitClose().closeCode()).isEqualTo(1001);
            polite.sendClose(1001);
            assertThat(closing.get(60, TimeUnit.SECONDS)).isLessThan(10_000L);
        } finally {
            hub.actor.close();
        }
    }

    @Test
    void aZeroBudgetDropsAtOnce() throws Exception {
        TestHub hub = new TestHub(HubConfig.builder().shutdownCloseTimeout(Duration.ZERO));
        try (RawWebSocket silent = new RawWebSocket(hub.port)) {
            // under the 5 s default it would wait for the silent peer; 0 does not
            assertThat(closeInBackground(hub).get(30, TimeUnit.SECONDS)).isLessThan(4_500L);
        } finally {
            hub.actor.close();
        }
    }

    @Test
    void theLeavesOfAStoppingHubAreNotBroadcast() throws Exception {
        TestHub hub = new TestHub(HubConfig.builder().shutdownCloseTimeout(Duration.ofMillis(1000)));
        try (RawWebSocket silent = new RawWebSocket(hub.port)) {
            silent.sendText(true, "{\"type\":\"heartbeat\",\"sender\":\"p/silent\",\"payload\":\"online\"}");
            hub.agent("p/polite"); // answers the close and leaves within the budget; its leave would be a broadcast
            CompletableFuture<Long> closing = closeInBackground(hub);
            java.util.List<String> seen = new java.util.ArrayList<>();
            boolean closed = false;
            for (RawWebSocket.Frame f = silent.read(); f != null; f = silent.read()) {
                if (f.opcode() == 0x8) {
                    closed = true;
                } else if (closed && f.opcode() == 0x1) {
                    seen.add(f.text());
                }
            }
            closing.get(30, TimeUnit.SECONDS);
            assertThat(closed).isTrue();
            assertThat(seen).as("frames after the close 1001").noneMatch(t -> t.contains("presence_update"));
        } finally {
            hub.actor.close();
        }
    }
}
