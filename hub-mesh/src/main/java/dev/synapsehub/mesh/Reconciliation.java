package dev.synapsehub.mesh;

import dev.synapsehub.core.actor.Outcome;
import dev.synapsehub.core.reply.ChannelReply;
import dev.synapsehub.core.reply.Refusal;
import dev.synapsehub.core.reply.Reply;

/**
 * The deterministic reconciliation of a replayed intent (seed 001 §9 step 3, §10): the leader
 * re-decides it with the single-hub rules on the current committed state (which re-validates
 * its preconditions: leases, scopes, versions, and its claim epoch, our fence token at the
 * entity level), and the outcome of that decision is mapped to one explicit result. An outcome
 * that decided nothing (busy, no quorum again) is no result: the intent stays queued.
 */
final class Reconciliation {
    private Reconciliation() {
    }

    /** The result of one replay, with what explains it (a refusal code, or the reply's kind). */
    record Result(ReplayOutcome outcome, String detail) {
    }

    /** Maps a replay's outcome; null when nothing was decided and the intent must be retried. */
    static Result of(Outcome outcome) {
        if (outcome instanceof Outcome.Decided d) {
            if (d.reply() instanceof Reply.Denied denied) {
                return denied(denied);
            }
            if (d.reply() instanceof ChannelReply c && !c.ok()) {
                // a channel verb refused on the committed state (exists already, not invited, not a member...)
                return new Result(ReplayOutcome.CONFLICT_REQUIRES_MERGE, "channel_result: " + c.message());
            }
            return new Result(ReplayOutcome.APPLIED, d.reply().getClass().getSimpleName());
        }
        if (outcome instanceof Outcome.Replayed) {
            return new Result(ReplayOutcome.NOOP_ALREADY_APPLIED, "the same keyed request already committed");
        }
        if (outcome instanceof Outcome.IdempotencyConflict) {
            return new Result(ReplayOutcome.CONFLICT_REQUIRES_MERGE, "idempotency_conflict: the idem_key was since"
                    + " used for a different request");
        }
        if (MeshSite.isForgotten(outcome)) {
            // the mesh cannot tell whether it committed before: deciding it again could apply it twice
            return new Result(ReplayOutcome.CONFLICT_REQUIRES_MERGE, "intent_forgotten: "
                    + ((Outcome.Refused) outcome).message());
        }
        return null; // refused: not decided (busy, no leader, unconfirmed); retried later
    }

    private static Result denied(Reply.Denied denied) {
        Refusal r = denied.refusal();
        String detail = r.name() + ": " + denied.message();
        return switch (r) {
            // the claim epoch the intent carried is no longer the task's: a stale fence
            case STALE_EPOCH -> new Result(ReplayOutcome.REJECTED_FENCED, detail);
            // the claim or task it acted on has a newer committed revision (released, expired, taken, gone)
            case NOT_CLAIMED, NOT_OWNER, NOT_FOUND -> new Result(ReplayOutcome.SUPERSEDED, detail);
            // someone else's committed change contradicts it (a live lease, a scope, a version, ...)
            default -> new Result(ReplayOutcome.CONFLICT_REQUIRES_MERGE, detail);
        };
    }
}
