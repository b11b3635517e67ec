package dev.synapsehub.net.handler;

import io.netty.channel.ChannelConfig;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * On the listening socket: an accept that failed (the process out of file descriptors, the
 * kernel out of memory) is counted, logged at WARN once until a connection is accepted again,
 * and accepting pauses for {@link #PAUSE_MILLIS} so the loop does not spin on a socket that stays
 * readable. Netty's own acceptor pauses the same way, but its failure went uncounted and was
 * logged again for every attempt, as an exception that reached the end of the pipeline. Any other
 * failure (not an {@link IOException}) makes Netty close the listening socket: that is logged at
 * ERROR, since no pause brings it back.
 */
public final class AcceptFailureWatch extends ChannelInboundHandlerAdapter {
    /** How long accepting pauses after a failure. */
    public static final long PAUSE_MILLIS = 1000;
    private static final Logger LOG = LoggerFactory.getLogger(AcceptFailureWatch.class);

    private final AtomicLong failures;
    /** True from a failure that was logged until a connection is accepted (only the accept loop uses it). */
    private boolean failing;

    /** {@code failures} counts every failed accept. */
    public AcceptFailureWatch(AtomicLong failures) {
        this.failures = failures;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object accepted) {
        if (failing) {
            failing = false;
            LOG.info("accepting connections again, after {} failed accept(s) in all since start", failures.get());
        }
        ctx.fireChannelRead(accepted);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        failures.incrementAndGet();
        if (!(cause instanceof IOException)) {
            // Netty closes a listening socket on any other failure: no pause will bring it back
            LOG.error("the listening socket failed and is closed: the hub accepts no new connections until it is "
                    + "restarted (connections already open go on)", cause);
            return;
        }
        if (!failing) {
            failing = true;
            LOG.warn("accepting a connection failed: {}; new connections wait {} ms, and further failures are counted "
                    + "in synapse_accept_failures_total, not logged, until one is accepted", cause.toString(), PAUSE_MILLIS);
        }
        ChannelConfig config = ctx.channel().config();
        if (config.isAutoRead()) {
            config.setAutoRead(false);
            ctx.channel().eventLoop().schedule(() -> config.setAutoRead(true), PAUSE_MILLIS, TimeUnit.MILLISECONDS);
        }
        // not passed on: counted and logged here, and the pause is the one Netty's acceptor would take
    }
}
