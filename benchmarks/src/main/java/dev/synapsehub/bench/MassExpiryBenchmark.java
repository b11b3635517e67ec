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

/** One advanceTo past the expiry of all {@code leases} live leases, on a fresh registry each time. */
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@State(Scope.Benchmark)
@Fork(1)
@Warmup(iterations = 5)
@Measurement(iterations = 15)
public class MassExpiryBenchmark {

    /** Live leases, all due at the measured advance. */
    @Param({"1000", "10000", "100000"})
    public int leases;

    private ClaimRegistry registry;
    private double past;

    /** Populates a fresh registry and runs a GC (both excluded); expiries are spread, out of insertion order. */
    @Setup(Level.Invocation)
    public void populate() {
        int n = leases;
        registry = Population.populate(n, i -> Population.T0 + 30.0 + (i * 7919L % n) * (3570.0 / n));
        past = Population.T0 + 3601.0;
    }

    @TearDown(Level.Invocation)
    public void check() {
        if (registry.liveCount() != 0) {
            throw new IllegalStateException(registry.liveCount() + " leases survived the mass expiry");
        }
    }

    /** Expires every lease in one call. */
    @Benchmark
    public double expireAll() {
        return registry.advanceTo(past);
    }
}
