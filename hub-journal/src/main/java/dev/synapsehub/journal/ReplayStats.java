package dev.synapsehub.journal;

/**
 * What the last replay read.
 *
 * @param rows rows read from the events table
 * @param replayed events decoded and handed to the sink
 * @param skippedUnknown rows of kinds this hub does not know (forward compatible, skipped)
 * @param corrupt rows skipped because their payload is not valid for their kind (malformed JSON,
 *     a member missing, null, mistyped or not finite) or because the state refused the event;
 *     never silently dropped: each is logged with its seq and counted here, and a hub reports
 *     itself degraded when this is not zero
 * @param firstCorruptSeq the seq of the first corrupt row, 0 when there is none
 * @param seconds wall time of the replay
 * @param epochFloor the highest epoch read from the corrupt claim-family rows ({@link EpochFloor}),
 *     0 when none shows one: the state's epoch counter is raised to it, since those epochs were
 *     issued even though their rows were skipped (INV-EF-1)
 */
public record ReplayStats(long rows, long replayed, long skippedUnknown, long corrupt, long firstCorruptSeq,
                          double seconds, long epochFloor) {
    /** Nothing replayed yet. */
    public static final ReplayStats NONE = new ReplayStats(0, 0, 0, 0, 0, 0, 0);

    /** True when no corrupt row was met. */
    public boolean clean() {
        return corrupt == 0;
    }

    /** Rows read per second. */
    public double rowsPerSecond() {
        return seconds <= 0 ? 0 : rows / seconds;
    }
}
