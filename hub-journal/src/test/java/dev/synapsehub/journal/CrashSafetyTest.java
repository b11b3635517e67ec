package dev.synapsehub.journal;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Crash safety: the core and the SQLite journal run in a child JVM ({@link CrashChild}) under
 * a steady load of durable claims, releases, handoffs, updates and checkpoints (keyed and not)
 * from several agents; the child is killed with SIGKILL at random moments and restarted on the
 * same file, and the file is checked against everything it acknowledged ({@link CrashRig}).
 * A SIGKILL keeps the page cache, so this suite alone would pass without fsync; the power-loss
 * suite ({@link PowerLossTest}) drops unsynced writes too.
 *
 * <p>Iterations: {@code -Dcrash.iterations=N} (50 by default, 500 in the {@code nightly} profile).
 */
class CrashSafetyTest {
    @TempDir
    Path dir;

    @Test
    void sigkillAtRandomMomentsLosesNoAcknowledgedOutcome() throws Exception {
        int iterations = Integer.getInteger("crash.iterations", 50);
        long seed = Long.getLong("crash.seed", System.nanoTime());
        CrashRig.Summary summary = new CrashRig(dir, ChildJvm.sqliteDirIn(dir), Map.of(), "crash suite").run(iterations, seed);
        assertThat(summary.killedWithAcks()).as("most kills land under load").isGreaterThan(iterations / 2);
        for (String verb : List.of("claim", "release", "handoff", "task_update", "checkpoint")) {
            assertThat(summary.keyedVerbs()).as("keyed " + verb + " grants were acknowledged").contains(verb);
        }
    }
}
