package dev.synapsehub.core.actor;

import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.core.reply.Reply;

import java.util.List;

/** What became of a submitted mutation. Only {@link Decided} outcomes changed anything. */
public sealed interface Outcome
        permits Outcome.Decided, Outcome.Replayed, Outcome.IdempotencyConflict, Outcome.Refused {

    /**
     * Decided and committed: the reply may be published, the events are durable.
     *
     * @param storedResponse the response stored for a keyed grant, else null
     */
    record Decided(Reply reply, List<JournaledEvent> committed, String storedResponse) implements Outcome {
        public Decided {
            committed = List.copyOf(committed);
        }
    }

    /** A retry of a keyed mutation already applied: the first response, verbatim. */
    record Replayed(String response) implements Outcome {
    }

    /** A keyed retry whose request differs from the first one under that key; nothing applied. */
    record IdempotencyConflict(String originalResponse) implements Outcome {
    }

    /** Not decided at all; nothing changed. */
    record Refused(Reason reason, String message) implements Outcome {
    }

    /** Why a mutation was refused without a decision. */
    enum Reason {
        /** The actor's queue is full; retry later. */
        BUSY,
        /** The journal append failed; the whole batch was undone (INV-JA-2). */
        JOURNAL_FAILED,
        /**
         * The batch's commit outcome is not known: a replicated append lost contact before it was
         * known, or the hub stopped while a local append was in doubt (an fsync failed and the
         * journal never wrote again). The change may or may not be in the log; a keyed retry
         * learns which.
         */
        COMMIT_UNKNOWN,
        /** The actor is shutting down. */
        SHUTTING_DOWN,
        /** An unexpected fault while deciding; the whole batch was undone. */
        INTERNAL_FAULT,
        /**
         * The actor stopped for good (an {@link Error} or a fault outside a decision): nothing is
         * accepted until the hub restarts from its journal. A request that was being committed when
         * it failed may or may not have been applied.
         */
        WRITER_FAILED,
        /**
         * Not decided yet: a replicated hub could not commit it in time (no quorum) and keeps it
         * as a durable queued intent, replayed once a quorum is back. It grants nothing until
         * then; the message names the intent, whose outcome is reported later.
         */
        QUEUED
    }
}
