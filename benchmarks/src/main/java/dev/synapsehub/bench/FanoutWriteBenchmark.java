package dev.synapsehub.bench;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/**
 * The hub's part of one delivered broadcast batch, per member (issue 15): hand one shared,
 * already encoded batch to a channel and flush it, the channel consuming it as a socket write
 * would (released at the head). Compares how the batch is shared: a pooled
 * {@code retainedDuplicate()} per member (a recycled derived buffer, released through Netty's
 * Recycler) against {@code retain()} plus a plain {@code duplicate()} (a short-lived object, no
 * recycler). The kernel's write is not in it: that cost is the same either way.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@State(Scope.Benchmark)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class FanoutWriteBenchmark {
    private static final int MEMBERS = 1000;

    @Param({"retainedDuplicate", "retainDuplicate"})
    public String share;

    private EmbeddedChannel[] members;
    private ByteBuf batch;

    @Setup(Level.Trial)
    public void setUp() {
        members = new EmbeddedChannel[MEMBERS];
        for (int i = 0; i < MEMBERS; i++) {
            members[i] = new EmbeddedChannel(new ChannelOutboundHandlerAdapter() {
                @Override
                public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
                    ReferenceCountUtil.release(msg); // as if written to the socket
                    promise.trySuccess();
                }
            });
        }
        byte[] frame = ("{\"type\":\"claim_granted\",\"sender\":\"System\",\"target\":\"all\",\"task_id\":\"a12s1-t123\","
                + "\"owner\":\"bench-abcdef/a12\",\"worktree\":\"wt-abcdef-12\",\"paths\":[\"src/a12s1-t123\"]}")
                .getBytes(StandardCharsets.UTF_8);
        batch = PooledByteBufAllocator.DEFAULT.directBuffer(frame.length * 2);
        batch.writeBytes(frame).writeBytes(frame);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        for (EmbeddedChannel c : members) {
            c.finishAndReleaseAll();
        }
        batch.release();
    }

    @Benchmark
    @OperationsPerInvocation(MEMBERS)
    public int deliverToEveryMember() {
        boolean pooled = "retainedDuplicate".equals(share);
        for (EmbeddedChannel c : members) {
            ByteBuf shared = pooled ? batch.retainedDuplicate() : batch.retain().duplicate();
            c.write(shared, c.voidPromise());
            c.flush();
        }
        return batch.refCnt();
    }
}
