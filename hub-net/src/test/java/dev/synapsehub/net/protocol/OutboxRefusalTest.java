package dev.synapsehub.net.protocol;

import dev.synapsehub.net.wire.HubFrames;
import dev.synapsehub.net.wire.WireJson;
import io.netty.util.concurrent.DefaultEventExecutor;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.RejectedExecutionHandlers;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Work that must not be dropped (ending a reclaimed identity's socket and lease on a mesh node)
 * still happens when the outbox thread refuses it: on the calling thread, counted as a fault.
 */
class OutboxRefusalTest {
    private final CountDownLatch release = new CountDownLatch(1);
    private final DefaultEventExecutor thread = new DefaultEventExecutor(null,
            new DefaultThreadFactory("test-outbox", true), 16, RejectedExecutionHandlers.reject());

    @AfterEach
    void stop() {
        release.countDown();
        thread.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }

    private Outbox outbox(HubMetrics metrics) {
        return new Outbox(thread, new HubFrames(new WireJson(64), "hub"), 1 << 16, Duration.ZERO, metrics, 100);
    }

    @Test
    void aTaskTheFullOutboxThreadRefusesRunsOnTheCallingThreadAndIsCounted() throws Exception {
        HubMetrics metrics = new HubMetrics();
        Outbox outbox = outbox(metrics);
        CountDownLatch busy = new CountDownLatch(1);
        thread.execute(() -> { // the outbox thread is stuck, and its one queue slot taken
            busy.countDown();
            try {
                release.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        assertThat(busy.await(30, TimeUnit.SECONDS)).isTrue();
        int queued = 0;
        try {
            for (; queued < 1000; queued++) { // fill its queue (Netty keeps at least 16 slots)
                thread.execute(() -> { });
            }
        } catch (RejectedExecutionException full) {
            // full now
        }
        assertThat(queued).as("the queue filled").isLessThan(1000);

        List<String> ranOn = new CopyOnWriteArrayList<>();
        outbox.runInOrderOrHere(() -> ranOn.add(Thread.currentThread().getName()), "an eviction");

        assertThat(ranOn).as("not dropped: run here").containsExactly(Thread.currentThread().getName());
        assertThat(metrics.faults.get()).as("the refusal is counted").isEqualTo(1);
    }

    @Test
    void aTaskTheOutboxThreadTakesRunsThereInOrder() throws Exception {
        HubMetrics metrics = new HubMetrics();
        Outbox outbox = outbox(metrics);
        CountDownLatch ran = new CountDownLatch(1);
        List<String> ranOn = new CopyOnWriteArrayList<>();
        outbox.runInOrderOrHere(() -> {
            ranOn.add(Thread.currentThread().getName());
            ran.countDown();
        }, "an eviction");
        assertThat(ran.await(30, TimeUnit.SECONDS)).isTrue();
        assertThat(ranOn).singleElement().asString().startsWith("test-outbox");
        assertThat(metrics.faults.get()).isZero();
    }
}
