package dev.synapsehub.net.handler;

import dev.synapsehub.net.protocol.HubMetrics;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.net.ssl.SSLException;

/**
 * Counts and logs (once each) TLS handshakes that fail and closes their connection, so the
 * failure does not also surface as an unexpected fault further up; leaves the pipeline once
 * the handshake succeeded.
 */
public final class TlsHandshakeWatch extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(TlsHandshakeWatch.class);
    private final HubMetrics metrics;

    public TlsHandshakeWatch(HubMetrics metrics) {
        this.metrics = metrics;
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof SslHandshakeCompletionEvent done) {
            if (done.isSuccess()) {
                ctx.pipeline().remove(this);
            } else {
                metrics.tlsHandshakeFailures.incrementAndGet();
                LOG.info("TLS handshake from {} failed: {}", ctx.channel().remoteAddress(),
                        done.cause() == null ? "unknown" : done.cause().getMessage());
                ctx.close();
                return;
            }
        }
        super.userEventTriggered(ctx, evt);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        for (Throwable t = cause; t != null; t = t.getCause()) {
            if (t instanceof SSLException) {
                ctx.close(); // the handshake failed: counted and logged by its completion event
                return;
            }
        }
        ctx.fireExceptionCaught(cause);
    }
}
