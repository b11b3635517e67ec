package dev.synapsehub.net.protocol;

import dev.synapsehub.core.event.DeliveryReceiptDeferredEvent;
import dev.synapsehub.net.session.Session;
import dev.synapsehub.net.session.SessionRegistry;
import dev.synapsehub.net.wire.HubFrames;
import dev.synapsehub.net.wire.WireJson;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.util.concurrent.DefaultEventExecutor;
import io.netty.util.concurrent.DefaultThreadFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A receipt whose write to its sender's socket throws is settled at the edge as not written:
 * kept owed, so the sender's next registration gets it, and the fault counted.
 */
class OwedReceiptWriteFaultTest {
    private final DefaultEventExecutor thread = new DefaultEventExecutor(new DefaultThreadFactory("test-outbox", true));
    private final FaultyActiveChannel first = new FaultyActiveChannel();
    private final EmbeddedChannel second = new EmbeddedChannel();

    @AfterEach
    void stop() {
        first.finishAndReleaseAll();
        second.finishAndReleaseAll();
        thread.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }

    @Test
    void aReceiptWhoseWriteThrowsStaysOwedForTheSendersNextRegistration() {
        HubMetrics metrics = new HubMetrics();
        WireJson json = new WireJson(64);
        HubFrames frames = new HubFrames(json, "hub");
        Outbox outbox = new Outbox(thread, frames, 1 << 16, Duration.ZERO, metrics, 100);
        SessionRegistry registry = new SessionRegistry(16, 0, 16, false, 60);
        // no journal: nothing to read at start, nothing to settle in the core
        OwedReceipts owed = new OwedReceipts(null, new ReceiptFrames(frames, json), null, registry, outbox, frames,
                metrics, false);
        Session alice = new Session(1, first, "127.0.0.1");
        registry.bind(alice, "p/alice", false, null, false, 1.0);

        first.failNext = true;
        owed.deliverDeferred(new DeliveryReceiptDeferredEvent(2.0, "p/alice", "p/bob", 7, 42, List.of("p/bob"),
                "p/bob", null), 2.0, true);
        thread.submit(() -> { }).syncUninterruptibly(); // the write (on the outbox thread) has run

        Session again = new Session(2, second, "127.0.0.1");
        registry.bind(again, "p/alice", true, null, false, 3.0);
        owed.onBound(again, "p/alice");
        thread.submit(() -> { }).syncUninterruptibly();

        TextWebSocketFrame receipt = second.readOutbound();
        assertThat(receipt).as("the receipt was kept owed, not lost").isNotNull();
        try {
            assertThat(receipt.text()).contains("\"receipt_notification_id\":\"delivery-receipt:42:deferred\"");
        } finally {
            receipt.release();
        }
        assertThat(metrics.faults.get()).as("the fault is counted").isEqualTo(1);
    }
}
