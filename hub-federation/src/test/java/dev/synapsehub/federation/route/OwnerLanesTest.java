package dev.synapsehub.federation.route;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/** One owner's sends run one at a time in their order, on the connector or, when its lane is idle, right here. */
class OwnerLanesTest {
    private final AtomicInteger handedToConnector = new AtomicInteger();
    private final ExecutorService threads = Executors.newCachedThreadPool();
    private final OwnerLanes lanes = new OwnerLanes(r -> {
        handedToConnector.incrementAndGet();
        threads.execute(r);
    }, dropped -> { });

    @AfterEach
    void stop() {
        threads.shutdownNow();
    }

    @Test
    void anIdleLaneRunsTheSendOnTheCallersThreadWithoutTheConnector() {
        Thread caller = Thread.currentThread();
        List<Thread> ranOn = new CopyOnWriteArrayList<>();
        assertThat(lanes.tryHere("hub-b", () -> {
            ranOn.add(Thread.currentThread());
            return true;
        })).isTrue();
        assertThat(ranOn).containsExactly(caller);
        assertThat(handedToConnector).hasValue(0);
    }

    @Test
    void aBusyLaneRunsNothingHereAndTheSendQueuesBehindWhatRuns() throws Exception {
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        List<String> order = new CopyOnWriteArrayList<>();
        lanes.execute("hub-b", () -> {
            running.countDown();
            await(release);
            order.add("first");
        });
        assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(lanes.tryHere("hub-b", () -> {
            order.add("here");
            return true;
        })).isFalse();
        lanes.execute("hub-b", () -> order.add("second"));
        assertThat(lanes.tryHere("hub-c", () -> {
            order.add("other owner");
            return true;
        })).as("another owner's lane is idle").isTrue();
        release.countDown();
        awaitSize(order, 3);
        assertThat(order).containsExactly("other owner", "first", "second");
    }

    @Test
    void sendsQueuedDuringATurnHereRunAfterItOnTheConnectorInOrder() throws Exception {
        List<String> order = new CopyOnWriteArrayList<>();
        assertThat(lanes.tryHere("hub-b", () -> {
            lanes.execute("hub-b", () -> order.add("queued 1"));
            lanes.execute("hub-b", () -> order.add("queued 2"));
            order.add("here");
            return true;
        })).isTrue();
        awaitSize(order, 3);
        assertThat(order).containsExactly("here", "queued 1", "queued 2");
        assertThat(handedToConnector.get()).isGreaterThanOrEqualTo(1);
    }

    @Test
    void aSendThatDeclinesLeavesTheLaneIdleForTheConnector() throws Exception {
        assertThat(lanes.tryHere("hub-b", () -> false)).isFalse();
        CountDownLatch ran = new CountDownLatch(1);
        lanes.execute("hub-b", ran::countDown);
        assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(handedToConnector).hasValue(1);
        // and the lane is idle again afterwards: the next send may run here
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        boolean here = false;
        while (!here && System.nanoTime() < deadline) {
            here = lanes.tryHere("hub-b", () -> true);
        }
        assertThat(here).isTrue();
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void awaitSize(List<String> list, int size) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (list.size() < size && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
    }
}
