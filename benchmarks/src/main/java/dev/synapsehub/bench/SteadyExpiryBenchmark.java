package dev.synapsehub.bench;

import dev.synapsehub.core.claim.ClaimRegistry;
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
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.util.concurrent.TimeUnit;

/** advanceTo(now) with nothing due, on a registry holding {@code liveClaims} live claims. */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@State(Scope.Benchmark)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class SteadyExpiryBenchmark {

    /** Live claims in the registry; expiries spread over the next hour, none due. */
    @Param({"1000", "100000"})
    public int liveClaims;

    private ClaimRegistry registry;
    private double now;

    @Setup(Level.Trial)
    public void setUp() {
        int n = liveClaims;
        registry = Population.populate(n, i -> Population.T0 + 600.0 + (i * 7919L % n) * (3000.0 / n));
        now = Population.T0 + 1.0;
    }

    @TearDown(Level.Trial)
    public void check() {
        if (registry.liveCount() != liveClaims) {
            throw new IllegalStateException("a claim expired during the steady-state benchmark");
        }
    }

    /** One expiry check at a fixed instant with nothing due (the path every decide and read takes). */
    @Benchmark
    public double advanceNothingDue() {
        return registry.advanceTo(now);
    }
}
