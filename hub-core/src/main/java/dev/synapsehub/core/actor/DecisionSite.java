package dev.synapsehub.core.actor;

import java.util.concurrent.CompletableFuture;

/**
 * Where the actor's mutations are decided. A single hub decides everything {@link #HERE}; a
 * replica that is not its cluster's leader must not decide at all (its clock and state are not
 * the authority) and hands each mutation to the node that may.
 */
public interface DecisionSite {
    /** Every mutation is decided by this actor. */
    DecisionSite HERE = new DecisionSite() {
        @Override
        public boolean decidesHere() {
            return true;
        }

        @Override
        public void handOver(Mutation mutation, CompletableFuture<Outcome> future) {
            throw new IllegalStateException("a local decision site never hands over");
        }
    };

    /** True when this actor may decide now. Called on the actor thread before each mutation. */
    boolean decidesHere();

    /**
     * Hands a mutation this actor may not decide to the one that may; completes {@code future}
     * with its outcome, from any thread. Called on the actor thread; must not block.
     */
    void handOver(Mutation mutation, CompletableFuture<Outcome> future);

    /**
     * A mutation decided here whose commit could not be confirmed ({@code refusal} is
     * {@link Outcome.Reason#COMMIT_UNKNOWN}; its changes are already undone). The answer the
     * caller gets: the refusal itself, or what the site made of it (a replicated hub queues it).
     * Called on the actor thread; must not block.
     */
    default Outcome unconfirmed(Mutation mutation, Outcome.Refused refusal) {
        return refusal;
    }

    /**
     * The outcome under which {@code mutation} was already decided and committed, or null to
     * decide it now. A replicated hub answers a retried request this way when the first attempt
     * committed but its answer was lost, so it is never decided twice. Called on the actor thread
     * just before a mutation would be decided here; must not block.
     */
    default Outcome decidedBefore(Mutation mutation) {
        return null;
    }

    /**
     * Confirms that this actor still decides now, before it answers decisions of a batch that
     * produced no events (a refusal decided from its state): no commit vouches for them, and a
     * replica that lost the lead without knowing it yet would answer from a stale state. A
     * replicated hub asks its cluster; false answers each such decision {@link #notConfirmed(Mutation)}
     * instead. Called on the actor thread; may block, within its own bound.
     */
    default boolean stillDecides() {
        return true;
    }

    /**
     * The answer a decision without events gets when {@link #stillDecides()} was false (nothing was
     * applied): a refusal saying to retry. {@code mutation} is null for an answer replayed from this
     * batch. Called on the actor thread; must not block.
     */
    default Outcome notConfirmed(Mutation mutation) {
        return new Outcome.Refused(Outcome.Reason.BUSY, "This node could not confirm it still decides; nothing was "
                + "applied. Retry.");
    }
}
