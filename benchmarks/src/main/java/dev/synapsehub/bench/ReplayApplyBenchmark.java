package dev.synapsehub.bench;

import dev.synapsehub.core.claim.ClaimRegistry;
import dev.synapsehub.core.event.CoordinationEvent;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The apply half of replay, without SQLite or decoding: a fresh registry folds the claim-family
 * events {@code DurableJournalBench replay} journals (claims with two paths over 10,000 tasks,
 * task updates with a checkpoint, releases), already decoded. Divide the events by the time for
 * events per second.
 */
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@State(Scope.Benchmark)
@Fork(1)
@Warmup(iterations = 10)
@Measurement(iterations = 20)
public class ReplayApplyBenchmark {

    /** Events folded per invocation. */
    @Param({"300000"})
    public int events;

    private List<CoordinationEvent> log;

    @Setup(Level.Trial)
    public void write() {
        log = ClaimLogWriter.events(events, "", 1_000_000.0);
    }

    /** Applies every event to a fresh registry, as replay does. */
    @Benchmark
    public int applyAll() {
        ClaimRegistry registry = new ClaimRegistry();
        for (CoordinationEvent e : log) {
            registry.apply(e);
        }
        return registry.liveCount();
    }
}
