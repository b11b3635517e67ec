package dev.synapsehub.bench;

import dev.synapsehub.core.claim.ClaimRegistry;
import dev.synapsehub.core.claim.Decision;
import dev.synapsehub.core.command.ClaimCommand;
import dev.synapsehub.core.command.ReleaseCommand;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.reply.Reply;
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

import java.util.List;
import java.util.concurrent.TimeUnit;

/** A non-overlapping claim into one worktree already holding {@code liveClaims} live claims. */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@State(Scope.Benchmark)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class ClaimIntoPopulatedWorktreeBenchmark {

    /** Live claims in the worktree before each operation (and after it). */
    @Param({"10", "100", "1000", "10000", "100000"})
    public int liveClaims;

    private static final int POOL = 1024;

    private ClaimRegistry registry;
    private ClaimCommand[] claims;
    private ReleaseCommand[] releases;
    private int next;

    @Setup(Level.Trial)
    public void setUp() {
        registry = Population.populate(liveClaims, i -> Population.T0 + 3600.0);
        claims = new ClaimCommand[POOL];
        releases = new ReleaseCommand[POOL];
        for (int k = 0; k < POOL; k++) {
            // Fresh paths beside the population's, under the same top-level directories.
            String path = "pkg" + (k % 100) + "/new" + k + "/File.java";
            claims[k] = new ClaimCommand("bench-agent", "bench-agent", "bench-task-" + k, null, null,
                    Population.WORKTREE, List.of(path), null);
            releases[k] = new ReleaseCommand("bench-agent", "bench-task-" + k, null);
        }
        // Sanity: the claim is granted and the release restores the population.
        if (!claimThenRelease().granted() || registry.liveCount() != liveClaims) {
            throw new IllegalStateException("benchmark claim was not granted or population changed");
        }
    }

    @TearDown(Level.Trial)
    public void check() {
        if (registry.liveCount() != liveClaims) {
            throw new IllegalStateException("population drifted to " + registry.liveCount());
        }
    }

    /** decide(claim) + apply(grant) + decide(release) + apply(release): population stays constant. */
    @Benchmark
    public Reply claimThenRelease() {
        int k = next;
        next = (k + 1) & (POOL - 1);
        Decision granted = registry.decide(claims[k], Population.T0);
        for (CoordinationEvent e : granted.events()) {
            registry.apply(e);
        }
        Decision released = registry.decide(releases[k], Population.T0);
        for (CoordinationEvent e : released.events()) {
            registry.apply(e);
        }
        return granted.reply();
    }

    /** decide(claim) alone: the conflict check and grant construction, no state change. */
    @Benchmark
    public Decision decideOnly() {
        int k = next;
        next = (k + 1) & (POOL - 1);
        return registry.decide(claims[k], Population.T0);
    }
}
