package dev.synapsehub.net.protocol;

import io.netty.util.concurrent.DefaultThreadFactory;
import org.junit.jupiter.api.Test;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** A task of the outbox thread that throws is a counted fault, not the end of every later reply and broadcast. */
class OutboxThreadTest {

    @Test
    void aTaskThatThrowsIsCountedAndTheThreadRunsTheNextOne() throws Exception {
        HubMetrics metrics = new HubMetrics();
        OutboxThread thread = new OutboxThread(new DefaultThreadFactory("test-outbox", true), 64, metrics);
        try {
            thread.execute(() -> {
                throw new IllegalStateException("injected task fault");
            });
            CountDownLatch ran = new CountDownLatch(1);
            thread.execute(ran::countDown);
            assertThat(ran.await(10, TimeUnit.SECONDS)).as("the next task ran").isTrue();
            // Netty's own executor runs what is queued even as its thread ends: it must not be ending
            assertThat(thread.isShuttingDown()).as("the thread goes on").isFalse();
            CountDownLatch later = new CountDownLatch(1);
            thread.execute(later::countDown);
            assertThat(later.await(10, TimeUnit.SECONDS)).as("a task handed over after the fault ran").isTrue();
            assertThat(metrics.faults.get()).as("the fault is counted").isEqualTo(1);
        } finally {
            thread.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }
}
