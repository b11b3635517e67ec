package dev.synapsehub.mesh;

/**
 * A mesh node's offline queue counters (seed 001 §9), measured when asked, for metrics.
 *
 * @param depth intents waiting for replay now
 * @param queued strong writes queued since start
 * @param reconciled intents reconciled (any of the five outcomes) since start
 * @param failures writes that could not be queued durably, and replay steps or reports that
 *     failed, since start (each also logged once)
 */
public record IntentCounters(int depth, long queued, long reconciled, long failures) {
}
