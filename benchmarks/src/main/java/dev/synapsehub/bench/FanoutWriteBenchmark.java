package dev.synapsehub.bench;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
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
 * already encoded batch to a channel and flush it, through the channel's outbound buffer, then
 * release it as a socket write would. Compares how the batch is shared: a pooled
 * {@code retainedDuplicate()} per member (a recycled derived buffer, released through Netty's
 * Recycler), {@code retain()} plus a plain {@code duplicate()}, or plus a plain {@code slice()}
 * (what the hub does now: short-lived objects, no recycler, bounded to the batch's bytes); and
 * {@code write} then {@code flush} against one {@code writeAndFlush}. The kernel's write is not
 * in it: that cost is the same either way.
 *
 * <p>{@link #main(String[])} measures the same with the thread's CPU time, the variants
 * interleaved round by round, for a machine whose other load makes JMH's wall-clock figures
 * useless.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@State(Scope.Benchmark)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class FanoutWriteBenchmark {
    private static final int MEMBERS = 1000;

    @Param({"retainedDuplicate", "retainDuplicate", "retainSlice"})
    public String share;

    @Param({"writeThenFlush", "writeAndFlush"})
    public String flush;

    private EmbeddedChannel[] members;
    private ByteBuf batch;

    private ChannelHandlerContext[] writers;

    @Setup(Level.Trial)
    public void setUp() {
        members = new EmbeddedChannel[MEMBERS];
        writers = new ChannelHandlerContext[MEMBERS];
        for (int i = 0; i < MEMBERS; i++) {
            members[i] = new EmbeddedChannel();
            // batches enter at the WebSocket encoder's context, as in the hub
            members[i].pipeline().addLast("wsencoder", new ChannelOutboundHandlerAdapter());
            writers[i] = members[i].pipeline().context("wsencoder");
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
        return deliver(share, "writeAndFlush".equals(flush));
    }

    private int deliver(String how, boolean together) {
        for (int i = 0; i < MEMBERS; i++) {
            ByteBuf shared = switch (how) {
                case "retainedDuplicate" -> batch.retainedDuplicate();
                case "retainDuplicate" -> batch.retain().duplicate();
                default -> batch.retain().slice();
            };
            ChannelHandlerContext out = writers[i];
            if (together) {
                out.writeAndFlush(shared, members[i].voidPromise());
            } else {
                out.write(shared, members[i].voidPromise());
                out.flush();
            }
            members[i].releaseOutbound(); // as the socket's write would
        }
        return batch.refCnt();
    }

    /**
     * CPU time per member (the thread's, so other load on the machine counts little), the
     * variants interleaved: {@code java -cp benchmarks.jar dev.synapsehub.bench.FanoutWriteBenchmark [ROUNDS]}.
     */
    public static void main(String[] args) {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 40;
        String[][] variants = {
            {"retainedDuplicate", "writeThenFlush"}, {"retainDuplicate", "writeThenFlush"},
            {"retainSlice", "writeThenFlush"}, {"retainSlice", "writeAndFlush"}};
        FanoutWriteBenchmark b = new FanoutWriteBenchmark();
        b.setUp();
        java.lang.management.ThreadMXBean cpu = java.lang.management.ManagementFactory.getThreadMXBean();
        long[][] perRound = new long[variants.length][rounds];
        int passes = 200;
        for (int r = -10; r < rounds; r++) { // ten rounds of warm-up
            for (int v = 0; v < variants.length; v++) {
                boolean together = "writeAndFlush".equals(variants[v][1]);
                long start = cpu.getCurrentThreadCpuTime();
                for (int p = 0; p < passes; p++) {
                    b.deliver(variants[v][0], together);
                }
                if (r >= 0) {
                    perRound[v][r] = (cpu.getCurrentThreadCpuTime() - start) / ((long) passes * MEMBERS);
                }
            }
        }
        for (int v = 0; v < variants.length; v++) {
            long[] ns = perRound[v].clone();
            java.util.Arrays.sort(ns);
            System.out.printf("%-18s %-15s CPU ns per member: median %d, p10 %d, p90 %d (%d rounds)%n",
                    variants[v][0], variants[v][1], ns[rounds / 2], ns[rounds / 10], ns[rounds * 9 / 10], rounds);
        }
        b.tearDown();
    }
}
