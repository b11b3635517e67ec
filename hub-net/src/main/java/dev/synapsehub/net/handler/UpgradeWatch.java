package dev.synapsehub.net.handler;

import dev.synapsehub.net.protocol.HubMetrics;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.util.AttributeKey;
import io.netty.util.concurrent.ScheduledFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A socket's life before its first complete HTTP request (the WebSocket upgrade, or a request to
 * an HTTP endpoint): counted in {@link PendingSockets} from the TCP accept until that request
 * arrives or it closes, closed at once beyond the pending caps, and closed when no complete
 * request arrived within the bound (the auth timeout). Both are counted. Sits after the HTTP
 * aggregator, on the connection's event loop.
 */
public final class UpgradeWatch extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(UpgradeWatch.class);
    private static final AttributeKey<UpgradeWatch> KEY = AttributeKey.valueOf(UpgradeWatch.class, "watch");

    private final PendingSockets pending;
    private final HubMetrics metrics;
    private final Duration bound;
    private String host;
    private boolean counted;
    private boolean requestSeen;
    private ScheduledFuture<?> timer;

    public UpgradeWatch(PendingSockets pending, HubMetrics metrics, Duration bound) {
        this.pending = pending;
        this.metrics = metrics;
        this.bound = bound;
    }

    /** The socket became a WebSocket session: from now on the session caps count it. */
    public static void upgraded(Channel channel) {
        UpgradeWatch watch = channel.attr(KEY).getAndSet(null);
        if (watch != null) {
            watch.stopCounting();
        }
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        host = ctx.channel().remoteAddress() instanceof InetSocketAddress a && a.getAddress() != null
                ? a.getAddress().getHostAddress() : String.valueOf(ctx.channel().remoteAddress());
        if (!pending.enter(host)) {
            metrics.socketsRefusedBeforeUpgrade.incrementAndGet();
            // debug only: a flood of refused sockets must not become a flood of log lines
            LOG.debug("socket from {} closed before its upgrade: too many pending connections", host);
            ctx.close();
            return;
        }
        counted = true;
        ctx.channel().attr(KEY).set(this);
        timer = ctx.executor().schedule(() -> {
            if (!requestSeen && ctx.channel().isActive()) {
                metrics.upgradeTimeouts.incrementAndGet();
                LOG.debug("socket from {} closed: no complete request within {} ms", host, bound.toMillis());
                ctx.close();
            }
        }, bound.toMillis(), TimeUnit.MILLISECONDS);
        super.channelActive(ctx);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
        if (msg instanceof FullHttpRequest) {
            requestSeen = true;
            if (timer != null) {
                timer.cancel(false);
            }
            // a complete request: an upgrade (the session caps count it from here) or an HTTP request
            // (answered at once; a keep-alive scraper or an event stream is no socket on its way to an upgrade)
            stopCounting();
        }
        super.channelRead(ctx, msg);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        if (timer != null) {
            timer.cancel(false);
        }
        ctx.channel().attr(KEY).set(null);
        stopCounting();
        super.channelInactive(ctx);
    }

    private void stopCounting() {
        if (counted) {
            counted = false;
            pending.leave(host);
        }
    }
}
