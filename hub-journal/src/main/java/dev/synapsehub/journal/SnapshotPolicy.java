package dev.synapsehub.journal;

/**
 * When the hub takes state snapshots, validated once.
 *
 * @param intervalSeconds take one when this long has passed since the last and rows were added;
 *     0 disables the timer
 * @param everyRows take one when this many rows were added since the last; 0 disables the count
 * @param keep complete snapshots kept, newest first (at least 1; 2 leaves a fallback)
 * @param onShutdown take one on a clean stop, so the next start replays no tail
 */
public record SnapshotPolicy(double intervalSeconds, long everyRows, int keep, boolean onShutdown) {
    /** Every 5 minutes or 1,000,000 rows, whichever comes first; two kept; one at shutdown. */
    public static final SnapshotPolicy DEFAULTS = new SnapshotPolicy(300, 1_000_000, 2, true);
    /** No automatic snapshots (neither periodic nor at shutdown); {@link Snapshotter#takeNow()} still works. */
    public static final SnapshotPolicy NEVER = new SnapshotPolicy(0, 0, 2, false);

    public SnapshotPolicy {
        if (!(intervalSeconds >= 0) || Double.isInfinite(intervalSeconds)) {
            throw new IllegalArgumentException("the snapshot interval must be a finite number of seconds >= 0");
        }
        if (everyRows < 0) {
            throw new IllegalArgumentException("the snapshot row count must be >= 0");
        }
        if (keep < 1) {
            throw new IllegalArgumentException("at least one snapshot must be kept");
        }
    }

    /** True when periodic snapshots are on (by time or by rows). */
    public boolean periodic() {
        return intervalSeconds > 0 || everyRows > 0;
    }
}
