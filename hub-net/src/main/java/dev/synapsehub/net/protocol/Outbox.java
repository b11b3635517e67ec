package dev.synapsehub.net.protocol;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.net.session.Session;
import dev.synapsehub.net.session.SessionRegistry;
import dev.synapsehub.net.wire.HubFrames;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.util.concurrent.EventExecutor;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Writes frames to connections. Actor outcomes are published from one single-threaded
 * executor, so every client sees broadcasts in the actor's commit order. A connection whose
 * unread output exceeds twice the high-water mark is dropped instead of growing the hub.
 */
public final class Outbox {
    private final EventExecutor executor;
    private final SessionRegistry registry;
    private final HubFrames frames;
    private final long hardLimitBytes;
    private final HubMetrics metrics;

    public Outbox(EventExecutor executor, SessionRegistry registry, HubFrames frames, int highWaterBytes,
                  HubMetrics metrics) {
        this.executor = executor;
        this.registry = registry;
        this.frames = frames;
        this.hardLimitBytes = 2L * highWaterBytes;
        this.metrics = metrics;
    }

    /** The publishing thread: continue actor futures here with {@code *Async}. */
    public EventExecutor executor() {
        return executor;
    }

    /** Sends one frame to one connection. */
    public void send(Session session, ObjectNode frame) {
        send(session, frames.write(frame));
    }

    /** Sends one serialised frame to one connection. */
    public void send(Session session, String text) {
        Channel channel = session.channel();
        if (!channel.isActive() || overLimit(session)) {
            return;
        }
        channel.writeAndFlush(new TextWebSocketFrame(text));
    }

    /** Sends a frame to every connection allowed to receive broadcasts. */
    public void broadcast(ObjectNode frame) {
        broadcast(frames.write(frame));
    }

    /**
     * Sends a serialised frame to every connection allowed to receive broadcasts: one task per
     * event loop writes it to that loop's connections, instead of one cross-thread write per
     * connection. Per connection, order is kept: every write to it goes through its loop's queue.
     */
    public void broadcast(String text) {
        ByteBuf bytes = Unpooled.copiedBuffer(text, StandardCharsets.UTF_8);
        try {
            Map<EventLoop, List<Session>> byLoop = new IdentityHashMap<>();
            for (Session session : registry.audience()) {
                byLoop.computeIfAbsent(session.channel().eventLoop(), loop -> new ArrayList<>()).add(session);
            }
            for (Map.Entry<EventLoop, List<Session>> group : byLoop.entrySet()) {
                ByteBuf shared = bytes.retainedDuplicate();
                List<Session> sessions = group.getValue();
                group.getKey().execute(() -> {
                    try {
                        for (Session session : sessions) {
                            Channel channel = session.channel();
                            if (channel.isActive() && !overLimit(session)) {
                                channel.writeAndFlush(new TextWebSocketFrame(shared.retainedDuplicate()));
                            }
                        }
                    } finally {
                        shared.release();
                    }
                });
            }
        } finally {
            bytes.release();
        }
    }

    /** Publishes a broadcast from the outbox thread (keeps broadcast order global). */
    public void broadcastLater(ObjectNode frame) {
        String text = frames.write(frame);
        executor.execute(() -> broadcast(text));
    }

    /** Sends {@code before} (if any), then a close frame with {@code code}/{@code reason}, then closes. */
    public void close(Session session, ObjectNode before, int code, String reason) {
        session.markClosing();
        Channel channel = session.channel();
        if (!channel.isActive()) {
            return;
        }
        if (before != null) {
            channel.write(new TextWebSocketFrame(frames.write(before)));
        }
        closeGracefully(channel, new CloseWebSocketFrame(code, reason));
    }

    /** How long a closed-by-the-hub peer has to answer the close frame before TCP is closed. */
    private static final long CLOSE_GRACE_MILLIS = 500;

    /**
     * Sends the close frame, then closes TCP when the peer answers it (the protocol handler does
     * that) or after a short grace. Closing TCP at once while the peer's next frames are still
     * unread makes the kernel reset the connection, and a reset can discard the close frame (and
     * with it the close code) before the client reads it.
     */
    public static void closeGracefully(Channel channel, CloseWebSocketFrame close) {
        channel.writeAndFlush(close).addListener(done -> channel.eventLoop()
                .schedule(() -> channel.close(), CLOSE_GRACE_MILLIS, java.util.concurrent.TimeUnit.MILLISECONDS));
    }

    private boolean overLimit(Session session) {
        ChannelOutboundBuffer buffer = session.channel().unsafe().outboundBuffer();
        if (buffer != null && buffer.totalPendingWriteBytes() > hardLimitBytes) {
            metrics.slowReadersDisconnected.incrementAndGet();
            session.markClosing();
            session.channel().close();
            return true;
        }
        return false;
    }
}
