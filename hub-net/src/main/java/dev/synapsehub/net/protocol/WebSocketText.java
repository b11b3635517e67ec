package dev.synapsehub.net.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;

/**
 * Encodes a server-to-client WebSocket text frame (RFC 6455 §5.2: final, unmasked) straight
 * into a buffer, so one encoding of a broadcast serves every connection.
 */
final class WebSocketText {
    private static final int FIN_TEXT = 0x81;

    private WebSocketText() {
    }

    /** Appends {@code text} as one complete text frame to {@code out}. */
    static void encode(String text, ByteBuf out) {
        int length = ByteBufUtil.utf8Bytes(text);
        out.ensureWritable(length + 10);
        out.writeByte(FIN_TEXT);
        if (length < 126) {
            out.writeByte(length);
        } else if (length <= 0xFFFF) {
            out.writeByte(126);
            out.writeShort(length);
        } else {
            out.writeByte(127);
            out.writeLong(length);
        }
        ByteBufUtil.reserveAndWriteUtf8(out, text, length);
    }
}
