package dev.synapsehub.journal;

import dev.synapsehub.core.state.StateImage;

/**
 * A state snapshot as stored: the image of the state at a commit boundary and what the journal
 * had reported by then.
 *
 * @param createdAt hub time it was taken, Unix seconds
 * @param corruptRows rows skipped by the replays that built this state (carried forward, so a
 *     hub started from the snapshot still reports them)
 * @param firstCorruptSeq the seq of the first of them, 0 when none
 * @param image the state; its {@link StateImage#lastSeq()} is the journal seq the snapshot covers
 */
public record StateSnapshot(double createdAt, long corruptRows, long firstCorruptSeq, StateImage image) {
    /** The journal seq the snapshot covers: replay resumes after it. */
    public long seq() {
        return image.lastSeq();
    }
}
