package dev.synapsehub.core.actor;

import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.journal.JournalException;
import dev.synapsehub.core.journal.JournaledEvent;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A decision log whose group commits may overlap: the actor proposes a batch, decides the next
 * one on top of it while it commits, and settles them in proposal order. A replicated hub's
 * commit is a network round trip, so waiting for each before deciding the next left the writer
 * idle; a local journal's fsync gains nothing from this and stays a plain {@link DecisionLog}.
 *
 * <p>A batch proposed on top of one that then fails must never commit on its own: the log
 * guarantees it (a replicated hub fences it), and the actor undoes and answers both alike.
 */
public interface PipelinedLog extends DecisionLog {
    /**
     * How many proposals may be in flight now (at least 1). The actor settles everything in
     * flight before proposing when this many are. Called on the actor thread.
     */
    int window();

    /**
     * Proposes {@code batch} (decided on top of every proposal still in flight) without waiting
     * for its commit. Called on the actor thread.
     *
     * @throws JournalException when the batch was certainly not proposed
     */
    Commit propose(List<CoordinationEvent> batch, List<DecidedMutation> decided) throws JournalException;

    /** A proposed group commit. */
    interface Commit {
        /** Completes once the outcome is known or waiting for it has timed out; from any thread. */
        CompletableFuture<?> done();

        /**
         * Waits for the outcome and returns the committed events, or throws as
         * {@link DecisionLog#append(List, List)} does. Called on the actor thread, in proposal order.
         */
        List<JournaledEvent> settle() throws JournalException;

        /**
         * An earlier proposal failed, so this one is given up without being settled: the log
         * forgets it. {@code unknown} says whether the earlier failure left its outcome unknown
         * (this one may then still commit, and arrives like another node's record) or not (then
         * this one cannot commit). Called on the actor thread.
         */
        void abandoned(boolean unknown);
    }
}
