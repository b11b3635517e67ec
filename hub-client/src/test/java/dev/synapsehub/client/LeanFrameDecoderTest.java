package dev.synapsehub.client;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.ContinuationWebSocketFrame;
import io.netty.handler.codec.http.websocketx.PingWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The load tool's frame decoder: RFC 6455 framing, whole text frames straight to the listener. */
class LeanFrameDecoderTest {
    private final List<String> direct = new ArrayList<>();
    private Consumer<ByteBuf> listener = b -> direct.add(b.toString(StandardCharsets.UTF_8));

    private EmbeddedChannel channel(long max) {
        return new EmbeddedChannel(new LeanFrameDecoder(max, () -> listener));
    }

    @Test
    void textFramesOfEveryLengthEncodingReachTheListenerEvenWhenSplitAcrossReads() {
        EmbeddedChannel ch = channel(1 << 20);
        String small = "{\"type\":\"claim_granted\"}";
        String medium = "m".repeat(300);      // 16-bit length
        String large = "L".repeat(70_000);    // 64-bit length
        ByteBuf all = Unpooled.buffer();
        all.writeBytes(frame(0x81, small, false)).writeBytes(frame(0x81, medium, false)).writeBytes(frame(0x81, large, false));
        while (all.isReadable()) {
            ch.writeInbound(all.readRetainedSlice(Math.min(1000, all.readableBytes())));
        }
        all.release();
        assertThat(direct).containsExactly(small, medium, large);
        assertThat((Object) ch.readInbound()).isNull();
    }

    @Test
    void fragmentedAndControlFramesBecomeNettyFrames() {
        EmbeddedChannel ch = channel(1 << 20);
        ch.writeInbound(frame(0x01, "part one ", false));
        ch.writeInbound(frame(0x80, "part two", false));
        ch.writeInbound(frame(0x89, "", false));
        ch.writeInbound(closeFrame(4013, "hub at capacity"));
        TextWebSocketFrame first = ch.readInbound();
        assertThat(first.isFinalFragment()).isFalse();
        ContinuationWebSocketFrame second = ch.readInbound();
        assertThat(second.isFinalFragment()).isTrue();
        assertThat(second.text()).isEqualTo("part two");
        assertThat((Object) ch.readInbound()).isInstanceOf(PingWebSocketFrame.class);
        CloseWebSocketFrame close = ch.readInbound();
        assertThat(close.statusCode()).isEqualTo(4013);
        assertThat(close.reasonText()).isEqualTo("hub at capacity");
        assertThat(direct).isEmpty();
        first.release();
        second.release();
        close.release();
    }

    @Test
    void aWholeTextFrameDoesNotOvertakeAFragmentedOneReadWithIt() {
        EmbeddedChannel ch = new EmbeddedChannel(new LeanFrameDecoder(1 << 20, () -> listener),
                new io.netty.channel.ChannelInboundHandlerAdapter() {
                    @Override
                    public void channelRead(io.netty.channel.ChannelHandlerContext ctx, Object msg) {
                        direct.add("pipeline:" + ((io.netty.buffer.ByteBufHolder) msg).content().toString(StandardCharsets.UTF_8));
                        io.netty.util.ReferenceCountUtil.release(msg);
                    }
                });
        ByteBuf read = Unpooled.buffer();
        read.writeBytes(frame(0x01, "first ", false)).writeBytes(frame(0x80, "half", false))
                .writeBytes(frame(0x81, "whole", false));
        ch.writeInbound(read);
        assertThat(direct).containsExactly("pipeline:first ", "pipeline:half", "whole");
    }

    @Test
    void withoutAListenerTextFramesGoDownThePipeline() {
        listener = null;
        EmbeddedChannel ch = channel(1 << 20);
        ch.writeInbound(frame(0x81, "plain", false));
        TextWebSocketFrame f = ch.readInbound();
        assertThat(f.text()).isEqualTo("plain");
        f.release();
    }

    @Test
    void aMaskedFrameAndAFragmentedOrOversizeControlFrameAreRefused() {
        assertThatThrownBy(() -> channel(1 << 20).writeInbound(frame(0x81, "masked", true)))
                .isInstanceOf(CorruptedFrameException.class).hasMessageContaining("masked");
        assertThatThrownBy(() -> channel(1 << 20).writeInbound(frame(0x09, "", false)))
                .isInstanceOf(CorruptedFrameException.class).hasMessageContaining("control frame");
        assertThatThrownBy(() -> channel(1 << 20).writeInbound(frame(0x89, "x".repeat(126), false)))
                .isInstanceOf(CorruptedFrameException.class).hasMessageContaining("control frame");
        assertThat(direct).isEmpty();
    }

    @Test
    void anOversizeFrameIsRefused() {
        EmbeddedChannel ch = channel(100);
        assertThatThrownBy(() -> ch.writeInbound(frame(0x81, "x".repeat(200), false)))
                .isInstanceOf(TooLongFrameException.class);
    }

    private static ByteBuf closeFrame(int code, String reason) {
        byte[] r = reason.getBytes(StandardCharsets.UTF_8);
        ByteBuf payload = Unpooled.buffer().writeShort(code).writeBytes(r);
        ByteBuf out = Unpooled.buffer().writeByte(0x88).writeByte(payload.readableBytes()).writeBytes(payload);
        payload.release();
        return out;
    }

    private static ByteBuf frame(int firstByte, String text, boolean masked) {
        byte[] payload = text.getBytes(StandardCharsets.UTF_8);
        ByteBuf out = Unpooled.buffer();
        out.writeByte(firstByte);
        int maskBit = masked ? 0x80 : 0;
        if (payload.length < 126) {
            out.writeByte(maskBit | payload.length);
        } else if (payload.length <= 0xFFFF) {
            out.writeByte(maskBit | 126).writeShort(payload.length);
        } else {
            out.writeByte(maskBit | 127).writeLong(payload.length);
        }
        byte[] key = {0x11, 0x22, 0x33, 0x44};
        if (masked) {
            out.writeBytes(key);
        }
        for (int i = 0; i < payload.length; i++) {
            out.writeByte(masked ? payload[i] ^ key[i & 3] : payload[i]);
        }
        return out;
    }
}
