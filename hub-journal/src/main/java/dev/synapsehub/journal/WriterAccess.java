package dev.synapsehub.journal;

import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.journal.JournalException;
import dev.synapsehub.core.state.CoordinationState;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Runs a piece of journal upkeep where the journal's writer connection may be used and the
 * state is at a commit boundary: on the actor thread of a running hub, or directly on the
 * calling thread when nothing else holds the journal (start-up, offline tools). Each call also
 * measures how long the writer was held, so upkeep can prove it never holds it for long.
 */
interface WriterAccess {

    /** Work that may fail with a journal error. */
    interface Work<T> {
        T run(CoordinationState state) throws JournalException;
    }

    /** Runs {@code work} on the writer; returns its result. */
    <T> T run(Work<T> work) throws JournalException;

    /** The longest single piece of work since {@link #resetLongest()}, in nanoseconds. */
    long longestNanos();

    /** Starts measuring {@link #longestNanos()} afresh. */
    void resetLongest();

    /** Through a running actor's upkeep queue (waits at most {@code timeoutSeconds} per piece). */
    static WriterAccess actor(CoordinationActor actor, long timeoutSeconds) {
        return new Timed() {
            @Override
            <T> T submit(Work<T> work) throws JournalException {
                try {
                    return actor.upkeep(s -> timed(work, s)).get(timeoutSeconds, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new JournalException("interrupted while waiting for the writer", e);
                } catch (TimeoutException e) {
                    throw new JournalException("the writer did not run upkeep within " + timeoutSeconds + " s", e);
                } catch (ExecutionException e) {
                    Throwable cause = e.getCause();
                    if (cause instanceof Failed f) {
                        throw f.failure;
                    }
                    throw new JournalException("upkeep on the writer failed: " + cause, cause);
                }
            }
        };
    }

    /** Directly on the calling thread, over a state nobody else owns. */
    static WriterAccess direct(CoordinationState state) {
        return new Timed() {
            @Override
            <T> T submit(Work<T> work) throws JournalException {
                try {
                    return timed(work, state);
                } catch (Failed f) {
                    throw f.failure;
                }
            }
        };
    }

    /** Carries a journal failure out of a {@code Function} run by the actor. */
    final class Failed extends RuntimeException {
        final JournalException failure;

        Failed(JournalException failure) {
            super(failure.getMessage(), failure, false, false);
            this.failure = failure;
        }
    }

    /** The timing both implementations share. */
    abstract class Timed implements WriterAccess {
        private volatile long longest;

        abstract <T> T submit(Work<T> work) throws JournalException;

        @Override
        public <T> T run(Work<T> work) throws JournalException {
            return submit(work);
        }

        <T> T timed(Work<T> work, CoordinationState state) {
            long start = System.nanoTime();
            try {
                return work.run(state);
            } catch (JournalException e) {
                throw new Failed(e);
            } finally {
                long took = System.nanoTime() - start;
                if (took > longest) {
                    longest = took;
                }
            }
        }

        @Override
        public long longestNanos() {
            return longest;
        }

        @Override
        public void resetLongest() {
            longest = 0;
        }
    }
}
