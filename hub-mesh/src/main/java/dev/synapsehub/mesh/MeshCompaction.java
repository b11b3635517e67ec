package dev.synapsehub.mesh;

/**
 * How a mesh node compacts its Raft log: it snapshots its coordination state every
 * {@code snapshotEvery} log entries it applied, and Ratis then purges the closed log segments the
 * snapshot covers (keeping the last {@code 2 × snapshotEvery} entries, so the previous snapshot
 * plus the log still rebuild the state if the newest snapshot is found corrupt).
 *
 * @param snapshotEvery log entries between two snapshots (at least 1)
 * @param segmentBytes the Raft log's segment size: only whole closed segments are purged
 */
public record MeshCompaction(long snapshotEvery, long segmentBytes) {
    /** Default interval: a restart replays at most about this many entries after its snapshot. */
    public static final long DEFAULT_SNAPSHOT_EVERY = 10_000;
    /** Default segment size. */
    public static final long DEFAULT_SEGMENT_BYTES = 8L << 20;
    /** The defaults. */
    public static final MeshCompaction DEFAULTS = new MeshCompaction(DEFAULT_SNAPSHOT_EVERY, DEFAULT_SEGMENT_BYTES);

    public MeshCompaction {
        if (snapshotEvery < 1 || snapshotEvery > 100_000_000) {
            throw new IllegalArgumentException("the mesh snapshot interval must be 1..100000000 log entries, not "
                    + snapshotEvery);
        }
        if (segmentBytes < 8 << 10) {
            throw new IllegalArgumentException("the Raft log segment size must be at least 8 KiB, not " + segmentBytes);
        }
    }

    /** With the default segment size. */
    public static MeshCompaction every(long entries) {
        return new MeshCompaction(entries, DEFAULT_SEGMENT_BYTES);
    }

    /** Log entries kept before the newest snapshot: enough to reach back to the previous one. */
    long preservedEntries() {
        return 2 * snapshotEvery;
    }
}
