package dev.synapsehub.net.protocol;

import dev.synapsehub.net.session.Session;
import dev.synapsehub.net.wire.HubFrames;
import dev.synapsehub.net.wire.WireJson;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.DefaultEventExecutor;
import io.netty.util.concurrent.DefaultThreadFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A private frame whose catch-up with earlier broadcasts throws is not lost silently: whoever
 * waits for its outcome is told it was not written, the fault is counted, and the connection,
 * which may have missed broadcasts, is closed 1011.
 */
class OutboxCatchUpFaultTest {
    private final DefaultEventExecutor thread = new DefaultEventExecutor(new DefaultThreadFactory("test-outbox", true));
    private final FaultyActiveChannel channel = new FaultyActiveChannel();

    @AfterEach
    void stop() {
        channel.finishAndReleaseAll();
        thread.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }

    @Test
    void aCatchUpThatThrowsSettlesTheWriteAsFailedCountsItAndClosesTheConnection() {
        HubMetrics metrics = new HubMetrics();
        // a long linger: the broadcast waits on the loop, so the private frame must catch the session up first
        Outbox outbox = new Outbox(thread, new HubFrames(new WireJson(64), "hub"), 1 << 16, Duration.ofHours(1),
                metrics, 100);
        Session session = new Session(1, channel, "127.0.0.1");
        session.markAuthenticated();
        outbox.join(session);
        outbox.broadcast("{\"type\":\"earlier\"}", null);
        thread.submit(() -> { }).syncUninterruptibly(); // the publish ran, its dispatch is queued behind this
        thread.submit(() -> { }).syncUninterruptibly(); // the dispatch ran: the batch is queued on the loop
        channel.runPendingTasks(); // the loop takes the batch in (its pass is an hour away)

        List<Boolean> outcomes = new CopyOnWriteArrayList<>();
        channel.failNext = true;
        outbox.send(session, "{\"type\":\"receipt\"}", outcomes::add);

        assertThat(outcomes).as("the waiter is told, once, that the frame was not written").containsExactly(false);
        assertThat(metrics.faults.get()).as("counted").isEqualTo(1);
        assertThat(session.closing()).isTrue();
        List<Object> out = new ArrayList<>();
        for (Object m; (m = channel.readOutbound()) != null; ) {
            out.add(m);
        }
        try {
            assertThat(out).noneMatch(m -> m instanceof TextWebSocketFrame t && t.text().contains("receipt"));
            assertThat(out).anySatisfy(m -> assertThat(m).isInstanceOfSatisfying(CloseWebSocketFrame.class,
                    c -> assertThat(c.statusCode()).isEqualTo(1011)));
        } finally {
            out.forEach(ReferenceCountUtil::release);
        }
    }
}
