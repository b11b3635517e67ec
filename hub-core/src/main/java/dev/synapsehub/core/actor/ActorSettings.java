package dev.synapsehub.core.actor;

/**
 * Bounds of the mutation actor, validated once.
 *
 * @param queueCapacity submissions waiting at most; a full queue answers BUSY
 * @param maxBatch commands decided into one journal transaction at most
 * @param slowCommitMillis a commit slower than this is logged as a warning
 */
public record ActorSettings(int queueCapacity, int maxBatch, long slowCommitMillis) {
    /** Sensible defaults: 65,536 queued, batches of up to 1,024, warn above 200 ms. */
    public static final ActorSettings DEFAULTS = new ActorSettings(65_536, 1_024, 200);

    public ActorSettings {
        if (queueCapacity < 1 || maxBatch < 1 || slowCommitMillis < 0) {
            throw new IllegalArgumentException("queueCapacity and maxBatch must be >= 1, slowCommitMillis >= 0");
        }
    }
}
