package dev.synapsehub.spec.runner;

import java.util.List;

/**
 * One step of a generated sequence, run against a system under test. Actions carry their
 * parameters and resolve anything state-dependent when they run, so a sequence stays
 * replayable after the shrinker has removed steps from it.
 *
 * <p>{@link #toString()} is what a failure report prints: keep it short and readable.
 *
 * @param <S> the system (usually a harness holding the real system and a model)
 */
public interface Action<S> {

    /** Runs the step; throws (usually an {@link AssertionError}) when an expectation fails. */
    void run(S system) throws Exception;

    /**
     * Simpler variants of this action, simplest first, tried by the shrinker in place of this
     * one. Empty by default.
     */
    default List<Action<S>> simplifications() {
        return List.of();
    }
}
