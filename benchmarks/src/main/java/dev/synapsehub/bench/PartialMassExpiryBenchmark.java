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

/**
 * Like {@link MassExpiryBenchmark}, but one lease in a hundred outlives the advance, so the
 * registry cannot drop everything at once and expires the other 99 % one lease at a time.
 */
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@State(Scope.Benchmark)
@Fork(1)
@Warmup(iterations = 5)
@Measurement(iterations = 15)
public class PartialMassExpiryBenchmark {

    /** Live leases; all but one in a hundred are due at the measured advance. */
    @Param({"10000", "100000"})
    public int leases;

    private ClaimRegistry registry;
    private double past;

    /** Populates a fresh registry and runs a GC (both excluded); expiries are spread, out of insertion order. */
    @Setup(Level.Invocation)
    public void populate() {
        int n = leases;
        registry = Population.populate(n, i -> i % 100 == 0
                ? Population.T0 + 7200.0
                : Population.T0 + 30.0 + (i * 7919L % n) * (3570.0 / n));
        past = Population.T0 + 3601.0;
    }

    @TearDown(Level.Invocation)
    public void check() {
        int survivors = (leases + 99) / 100;
        if (registry.liveCount() != survivors) {
            throw new IllegalStateException(registry.liveCount() + " leases live, expected " + survivors);
        }
    }

    /** Expires 99 % of the leases in one call. */
    @Benchmark
    public double expireAllButOnePercent() {
        return registry.advanceTo(past);
    }
}
