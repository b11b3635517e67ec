package dev.synapsehub.mesh;

import java.util.function.BooleanSupplier;

/**
 * How long a mesh node has known no leader, for {@code /health}'s {@code mesh_no_leader}:
 * sampled often on the node's scheduler and again when asked, so the time counts from the last
 * moment a leader was seen. A node counts from its start until it first learns of one.
 */
final class LeaderAbsence {
    /** Elections a normal leader change may take (split votes included) before a missing leader is news. */
    static final int ELECTIONS = 5;

    private final BooleanSupplier leaderKnown;
    private final long afterMillis;
    private volatile long lastKnownNanos = System.nanoTime();

    /** @param afterMillis how long without a leader counts as having none ({@link #afterMillis(MeshConfig)}) */
    LeaderAbsence(BooleanSupplier leaderKnown, long afterMillis) {
        this.leaderKnown = leaderKnown;
        this.afterMillis = afterMillis;
    }

    /**
     * The larger of the commit timeout (every write taken meanwhile is queued or answered
     * commit_unknown) and {@link #ELECTIONS} election timeouts (so an ordinary election, one or
     * two rounds, never shows): 5 s with the defaults.
     */
    static long afterMillis(MeshConfig config) {
        return Math.max(config.commitTimeout().toMillis(), ELECTIONS * config.electionTimeoutMax().toMillis());
    }

    /** Notes the time when a leader is known now. */
    void sample() {
        if (leaderKnown.getAsBoolean()) {
            lastKnownNanos = System.nanoTime();
        }
    }

    /** Milliseconds since a leader was last known (0 while one is). */
    long millis() {
        sample();
        return Math.max(0, (System.nanoTime() - lastKnownNanos) / 1_000_000);
    }

    /** True once no leader has been known for longer than the threshold. */
    boolean overdue() {
        return millis() > afterMillis;
    }
}
