package dev.synapsehub.client;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.ContinuationWebSocketFrame;
import io.netty.handler.codec.http.websocketx.PingWebSocketFrame;
import io.netty.handler.codec.http.websocketx.PongWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketFrameDecoder;

import java.util.List;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The load tool's client-side WebSocket frame decoder (RFC 6455 §5.2). A complete, unfragmented
 * text frame goes straight to the byte listener, when one is set, as a slice of the read buffer:
 * no frame object, no copy. Everything else becomes the usual Netty frame for the rest of the
 * pipeline. A receiver of a thousand broadcasts per claim spends its time here, so it is lean.
 */
final class LeanFrameDecoder extends ByteToMessageDecoder implements WebSocketFrameDecoder {
    private static final int OP_CONTINUATION = 0x0;
    private static final int OP_TEXT = 0x1;
    private static final int OP_BINARY = 0x2;
    private static final int OP_CLOSE = 0x8;
    private static final int OP_PING = 0x9;
    private static final int OP_PONG = 0xA;

    private final long maxPayload;
    private final Supplier<Consumer<ByteBuf>> direct;

    LeanFrameDecoder(long maxPayload, Supplier<Consumer<ByteBuf>> direct) {
        this.maxPayload = maxPayload;
        this.direct = direct;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        while (in.readableBytes() >= 2) {
            int start = in.readerIndex();
            int b0 = in.getUnsignedByte(start);
            int b1 = in.getUnsignedByte(start + 1);
            if ((b0 & 0x70) != 0) {
                in.skipBytes(in.readableBytes()); // the stream cannot be resynchronised
                throw new CorruptedFrameException("reserved bits set: no extension was negotiated");
            }
            if ((b1 & 0x80) != 0) {
                in.skipBytes(in.readableBytes());
                throw new CorruptedFrameException("a masked frame: a server must not mask (RFC 6455 section 5.1)");
            }
            boolean fin = (b0 & 0x80) != 0;
            int opcode = b0 & 0x0F;
            int len7 = b1 & 0x7F;
            if (opcode >= OP_CLOSE && (!fin || len7 > 125)) {
                in.skipBytes(in.readableBytes());
                throw new CorruptedFrameException("a control frame must be whole and at most 125 bytes");
            }
            int header = 2 + (len7 == 126 ? 2 : len7 == 127 ? 8 : 0);
            if (in.readableBytes() < header) {
                return;
            }
            long length = len7 == 126 ? in.getUnsignedShort(start + 2) : len7 == 127 ? in.getLong(start + 2) : len7;
            if (length < 0 || length > maxPayload) {
                in.skipBytes(in.readableBytes());
                throw new TooLongFrameException("frame of " + length + " bytes exceeds " + maxPayload);
            }
            if (in.readableBytes() < header + length) {
                return;
            }
            int payloadAt = start + header;
            int n = (int) length;
            in.skipBytes(header + n);
            Consumer<ByteBuf> listener = direct.get();
            if (fin && opcode == OP_TEXT && listener != null) {
                listener.accept(in.slice(payloadAt, n));
                continue;
            }
            ByteBuf payload = in.retainedSlice(payloadAt, n);
            switch (opcode) {
                case OP_CONTINUATION -> out.add(new ContinuationWebSocketFrame(fin, 0, payload));
                case OP_TEXT -> out.add(new TextWebSocketFrame(fin, 0, payload));
                case OP_BINARY -> out.add(new BinaryWebSocketFrame(fin, 0, payload));
                case OP_CLOSE -> out.add(new CloseWebSocketFrame(true, 0, payload));
                case OP_PING -> out.add(new PingWebSocketFrame(payload));
                case OP_PONG -> out.add(new PongWebSocketFrame(payload));
                default -> {
                    payload.release();
                    throw new CorruptedFrameException("unknown opcode " + opcode);
                }
            }
            // Frames in out reach the pipeline when decode returns: a later whole text frame
            // must not overtake them by going to the listener first.
            return;
        }
    }
}
