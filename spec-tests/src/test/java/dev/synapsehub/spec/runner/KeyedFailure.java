package dev.synapsehub.spec.runner;

/**
 * A failure that names what broke (for example an invariant id). While shrinking, a candidate
 * sequence only counts as "still failing" when it fails with the same key, so the shrinker
 * cannot wander off to a different, unrelated failure.
 */
public interface KeyedFailure {
    /** A stable key for the kind of failure, e.g. {@code INV-ME-1}. */
    String failureKey();
}
