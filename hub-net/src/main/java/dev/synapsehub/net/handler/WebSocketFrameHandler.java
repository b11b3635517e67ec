package dev.synapsehub.net.handler;

import com.fasterxml.jackson.core.JacksonException;
import dev.synapsehub.net.protocol.HubMetrics;
import dev.synapsehub.net.protocol.InboundPipeline;
import dev.synapsehub.net.protocol.Outbox;
import dev.synapsehub.net.session.Session;
import dev.synapsehub.net.session.SessionRegistry;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.PrematureChannelClosureException;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.CorruptedWebSocketFrameException;
import io.netty.handler.codec.http.websocketx.PingWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One WebSocket connection: admission on handshake, frames into the {@link InboundPipeline},
 * keepalive pings, slow-reader and fault handling. Never blocks the event loop.
 */
public final class WebSocketFrameHandler extends SimpleChannelInboundHandler<WebSocketFrame> {
    private static final Logger LOG = LoggerFactory.getLogger(WebSocketFrameHandler.class);

    private final Shared shared;
    private final InboundPipeline pipeline;
    private Session session;

    /**
     * What every connection's handler shares, wired once by {@code HubServer}.
     *
     * @param ids the source of session ids
     * @param scopedByDefault whether a new connection starts on scoped delivery (claim traffic once bound and matched)
     * @param authTimeout how long a connection may stay unregistered
     * @param slowReaderGrace how long a connection may stay unwritable before it is dropped as a slow reader
     */
    public record Shared(SessionRegistry registry, Outbox outbox, HubMetrics metrics, InboundPipeline pipeline,
            AtomicLong ids, boolean scopedByDefault, Duration authTimeout, Duration slowReaderGrace) {
    }

    public WebSocketFrameHandler(Shared shared) {
        this.shared = shared;
        this.pipeline = shared.pipeline();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof WebSocketServerProtocolHandler.HandshakeComplete) {
            admit(ctx);
        } else if (evt instanceof IdleStateEvent idle && idle.state() == IdleState.READER_IDLE) {
            // Contract §3.1 keepalive. Any inbound frame (a pong included) resets the idle
            // clock, so the first idle event means "silent for one interval": ping. A second
            // one without a read in between means the ping went unanswered: drop the peer.
            // Pinging on inbound silence (not outbound) keeps a busy broadcast stream from
            // starving a passive listener of pings.
            if (idle.isFirst()) {
                ctx.writeAndFlush(new PingWebSocketFrame());
            } else {
                if (session != null) {
                    session.markClosing();
                }
                // best effort: a peer that stopped reading may never take the close frame
                ctx.writeAndFlush(new CloseWebSocketFrame(1011, "keepalive ping timeout"));
                ctx.close();
            }
        } else {
            super.userEventTriggered(ctx, evt);
        }
    }

    private void admit(ChannelHandlerContext ctx) {
        UpgradeWatch.upgraded(ctx.channel()); // from here the session caps below count this socket
        String host = ctx.channel().remoteAddress() instanceof InetSocketAddress a
                ? a.getAddress().getHostAddress() : String.valueOf(ctx.channel().remoteAddress());
        Session s = new Session(shared.ids().incrementAndGet(), ctx.channel(), host);
        SessionRegistry.Refusal refusal = shared.registry().admit(s);
        if (refusal != null) {
            s.markClosing();
            Outbox.closeGracefully(ctx.channel(), new CloseWebSocketFrame(refusal.code(), refusal.reason()));
            return;
        }
        session = s;
        // scoped by default: the connection takes claim traffic only once it is bound and matched
        shared.outbox().join(s, shared.scopedByDefault());
        long timeout = shared.authTimeout().toMillis();
        s.authTimer(ctx.executor().schedule(() -> pipeline.onAuthTimeout(s), timeout, TimeUnit.MILLISECONDS));
        pipeline.onAdmitted(s);
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, WebSocketFrame frame) {
        if (session == null) {
            return;
        }
        if (frame instanceof TextWebSocketFrame || frame instanceof BinaryWebSocketFrame) {
            pipeline.onFrame(session, ByteBufUtil.getBytes(frame.content()));
        }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
        Session s = session;
        if (s != null && !ctx.channel().isWritable() && s.slowReaderTimer() == null) {
            long grace = shared.slowReaderGrace().toMillis();
            s.slowReaderTimer(ctx.executor().schedule(() -> {
                s.slowReaderTimer(null);
                if (!ctx.channel().isWritable()) {
                    if (s.dropAsSlowReader()) {
                        shared.metrics().slowReadersDisconnected.incrementAndGet();
                    }
                    ctx.close();
                }
            }, grace, TimeUnit.MILLISECONDS));
        }
        super.channelWritabilityChanged(ctx);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        if (session != null) {
            shared.outbox().leave(session);
            pipeline.onClosed(session);
        }
        super.channelInactive(ctx);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof PrematureChannelClosureException) {
            // the peer closed (or reset) in the middle of a fragmented message: an ordinary
            // disconnect, not a fault; the aggregator has released what it held
            LOG.debug("connection closed mid-message on {}", session);
            if (session != null) {
                session.markClosing();
            }
            return;
        }
        if (cause instanceof CorruptedWebSocketFrameException corrupt) {
            // the frame decoder already answered with the right code (1002 protocol error, 1007,
            // 1009) and is closing: a misbehaving peer, not a hub fault
            LOG.debug("protocol violation on {}: {} ({})", session, corrupt.getMessage(), corrupt.closeStatus());
            if (session != null) {
                session.markClosing();
            }
            ctx.close();
            return;
        }
        if (cause instanceof TooLongFrameException || cause instanceof CorruptedFrameException) {
            if (session != null) {
                session.markClosing();
            }
            ctx.writeAndFlush(new CloseWebSocketFrame(1009, "message too big"))
                    .addListener(ChannelFutureListener.CLOSE);
            return;
        }
        if (cause instanceof ClosedChannelException) {
            // Writes still queued when a connection closes (a dropped slow reader has many) fail
            // one by one and land here: expected, and nothing is left to close.
            return;
        }
        if (cause instanceof IOException && !(cause instanceof JacksonException)) {
            // the peer reset or vanished mid-write: an ordinary disconnect, not a hub fault
            LOG.debug("connection lost on {}: {}", session, cause.toString());
            if (session != null) {
                session.markClosing();
            }
            ctx.close();
            return;
        }
        shared.metrics().faults.incrementAndGet();
        LOG.warn("unexpected fault on {}; closing 1011", session, cause);
        if (session != null) {
            session.markClosing();
        }
        if (ctx.channel().isActive()) {
            ctx.writeAndFlush(new CloseWebSocketFrame(1011, "unexpected fault"))
                    .addListener(ChannelFutureListener.CLOSE);
        }
    }
}
