package dev.synapsehub.net.handler;

import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;

/**
 * RFC 6455 §7.4: a close frame whose status code may not appear on the wire (below 1000, 1004
 * to 1006, 1015 to 2999, 5000 and above) is a protocol error, answered 1002 instead of echoed.
 * Sits just before the protocol handler, which answers and closes.
 */
@ChannelHandler.Sharable
public final class CloseCodeGuard extends ChannelInboundHandlerAdapter {
    /** The one instance (it keeps no state). */
    public static final CloseCodeGuard INSTANCE = new CloseCodeGuard();

    private CloseCodeGuard() {
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof CloseWebSocketFrame close && !sendable(close.statusCode())) {
            close.release();
            ctx.fireChannelRead(new CloseWebSocketFrame(1002, "invalid close code"));
            return;
        }
        ctx.fireChannelRead(msg);
    }

    /** True for the codes a peer may send; -1 is a close frame without a code, which is allowed. */
    static boolean sendable(int code) {
        return code == -1
                || (code >= 1000 && code <= 1003)
                || (code >= 1007 && code <= 1014)
                || (code >= 3000 && code <= 4999);
    }
}
