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
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Beyond its bound the edge's copy of the owed receipts drops the receipt first owed longest
 * ago, whoever its sender, as the core's receipt outbox does: never one the core still owes.
 */
class OwedReceiptEvictionTest {
    private final DefaultEventExecutor thread = new DefaultEventExecutor(new DefaultThreadFactory("test-outbox", true));
    private final EmbeddedChannel alphaSocket = new EmbeddedChannel();
    private final EmbeddedChannel bobSocket = new EmbeddedChannel();
    private final WireJson json = new WireJson(64);

    @AfterEach
    void stop() {
        alphaSocket.finishAndReleaseAll();
        bobSocket.finishAndReleaseAll();
        thread.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }

    private static DeliveryReceiptDeferredEvent deferred(String sender, long seq) {
        return new DeliveryReceiptDeferredEvent(2.0, sender, "p/rx", seq, seq, List.of("p/rx"), "p/rx", null);
    }

    private List<String> drained(OwedReceipts owed, SessionRegistry registry, EmbeddedChannel socket, String name,
            long id) {
        Session session = new Session(id, socket, "127.0.0.1");
        registry.bind(session, name, false, null, false, 3.0);
        owed.onBound(session, name);
        thread.submit(() -> { }).syncUninterruptibly(); // the writes (on the outbox thread) have run
        List<String> out = new ArrayList<>();
        for (TextWebSocketFrame f = socket.readOutbound(); f != null; f = socket.readOutbound()) {
            try {
                out.add(json.parse(f.text()).path("receipt_notification_id").asText());
            } finally {
                f.release();
            }
        }
        return out;
    }

    @Test
    void theReceiptOwedLongestAgoIsDroppedFirstWhateverItsSender() {
        HubMetrics metrics = new HubMetrics();
        HubFrames frames = new HubFrames(json, "hub");
        Outbox outbox = new Outbox(thread, frames, 1 << 20, Duration.ZERO, metrics, 100);
        SessionRegistry registry = new SessionRegistry(16, 0, 16, false, 60);
        OwedReceipts owed = new OwedReceipts(null, new ReceiptFrames(frames, json), null, registry, outbox, frames,
                metrics, false);
        // owed in this order, every sender offline: alpha's 1, bob's 2, alpha's 3, then carol's 4, 5, ...
        owed.deliverDeferred(deferred("p/alpha", 1), 2.0, true);
        owed.deliverDeferred(deferred("p/bob", 2), 2.0, true);
        owed.deliverDeferred(deferred("p/alpha", 3), 2.0, true);
        for (long seq = 4; seq <= OwedReceipts.MAX_OWED_RECEIPTS + 2; seq++) {
            owed.deliverDeferred(deferred("p/carol", seq), 2.0, true);
        }
        // two beyond the bound: the core's outbox dropped the two owed longest ago, 1 and 2
        assertThat(drained(owed, registry, alphaSocket, "p/alpha", 1))
                .as("alpha's later receipt is still owed by the core").containsExactly("delivery-receipt:3:deferred");
        assertThat(drained(owed, registry, bobSocket, "p/bob", 2)).as("bob's was owed before it").isEmpty();
    }
}
