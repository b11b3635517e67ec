package dev.synapsehub.net.protocol;

import dev.synapsehub.net.session.Session;
import dev.synapsehub.net.wire.HubFrames;
import dev.synapsehub.net.wire.WireJson;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.RejectedExecutionHandlers;
import io.netty.util.concurrent.SingleThreadEventExecutor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A private frame the full outbox thread refuses is written directly, and still before the
 * connection's edge answers given after it: an edge error that waits for it is not released
 * until it was written.
 */
class OutboxRefusedAnswerOrderTest {
    /** An outbox thread that runs {@link #beforeNext} (once) just before it takes or refuses a task. */
    private static final class HookedThread extends SingleThreadEventExecutor {
        volatile Runnable beforeNext;

        HookedThread() {
            super(null, new DefaultThreadFactory("test-outbox", true), true, 16, RejectedExecutionHandlers.reject());
        }

        @Override
        public void execute(Runnable task) {
            Runnable hook = beforeNext;
            if (hook != null) {
                beforeNext = null;
                hook.run();
            }
            super.execute(task);
        }

        @Override
        protected void run() {
            do {
                Runnable task = takeTask();
                if (task != null) {
                    task.run();
                    updateLastExecutionTime();
                }
            } while (!confirmShutdown());
        }
    }

    private final CountDownLatch release = new CountDownLatch(1);
    private final HookedThread thread = new HookedThread();
    private final EmbeddedChannel channel = new EmbeddedChannel();

    @AfterEach
    void stop() {
        release.countDown();
        channel.finishAndReleaseAll();
        thread.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }

    @Test
    void aPrivateFrameTheFullOutboxRefusesIsWrittenBeforeAnEdgeAnswerGivenAfterIt() throws Exception {
        HubMetrics metrics = new HubMetrics();
        Outbox outbox = new Outbox(thread, new HubFrames(new WireJson(64), "hub"), 1 << 16, Duration.ZERO,
                metrics, 100);
        Session session = new Session(1, channel, "127.0.0.1");
        session.markAuthenticated();
        CountDownLatch stuck = new CountDownLatch(1);
        thread.execute(() -> { // the outbox thread is stuck, and its queue fills behind it
            stuck.countDown();
            try {
                release.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        assertThat(stuck.await(30, TimeUnit.SECONDS)).isTrue();
        int queued = 0;
        try {
            for (; queued < 1000; queued++) {
                thread.execute(() -> { });
            }
        } catch (RejectedExecutionException full) {
            // full now
        }
        assertThat(queued).as("the queue filled").isLessThan(1000);

        // the edge answers an error on another thread (its I/O loop) just as the private frame is
        // handed to the outbox thread, which refuses it: the error comes after the frame
        thread.beforeNext = () -> {
            Thread edge = new Thread(() -> outbox.send(session, "{\"type\":\"error\"}"), "edge");
            edge.start();
            try {
                edge.join(30_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
        outbox.sendInOrder(session, "{\"type\":\"private\"}");

        List<String> written = new ArrayList<>();
        for (Object m; (m = channel.readOutbound()) != null; ) {
            if (m instanceof TextWebSocketFrame t) {
                written.add(t.text());
            }
            ReferenceCountUtil.release(m);
        }
        assertThat(written).as("the private frame first, as handed over first")
                .containsExactly("{\"type\":\"private\"}", "{\"type\":\"error\"}");
        assertThat(metrics.faults.get()).as("the refusal is counted").isPositive();
    }
}
