package dev.synapsehub.mesh;

import dev.synapsehub.core.actor.DecisionSite;
import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.Outcome;
import org.apache.ratis.server.DivisionInfo;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;
import java.util.function.Supplier;

/**
 * Where a mesh node's mutations are decided: here while this node leads a term whose earlier
 * records its state has applied (Raft leader = the contract's coordinator), otherwise at the
 * leader, through the {@link Forwarder}. A mutation forwarded to this node is never forwarded
 * again: if this node stopped leading meanwhile it is answered {@link #NOT_DECIDING} and the
 * follower that sent it retries at the new leader.
 */
final class MeshSite implements DecisionSite {
    /** The answer to a forwarded mutation this node can no longer decide (identity-compared). */
    static final Outcome.Refused NOT_DECIDING = new Outcome.Refused(Outcome.Reason.BUSY,
            "This mesh node stopped leading; retry at the new leader.");

    private final ReplicaCursor cursor;
    private final Supplier<DivisionInfo> info;
    private final Forwarder forwarder;
    private final Map<Mutation, String> forwardedOrigins;
    private final BiFunction<Mutation, Outcome.Refused, Outcome> queue;
    private final IntentTags tags;
    private final DecidedIntents decided;
    private final java.util.function.Predicate<String> inFlight;
    private volatile String failure;

    /**
     * @param queue what becomes of a write no quorum committed in time: queued (seed 001 §9) or
     *     answered with the refusal
     */
    MeshSite(ReplicaCursor cursor, Supplier<DivisionInfo> info, Forwarder forwarder,
             Map<Mutation, String> forwardedOrigins, BiFunction<Mutation, Outcome.Refused, Outcome> queue,
             IntentTags tags, DecidedIntents decided, java.util.function.Predicate<String> inFlight) {
        this.inFlight = inFlight;
        this.tags = tags;
        this.decided = decided;
        this.cursor = cursor;
        this.info = info;
        this.forwarder = forwarder;
        this.forwardedOrigins = forwardedOrigins;
        this.queue = queue;
    }

    @Override
    public boolean decidesHere() {
        if (failure != null) {
            return false;
        }
        DivisionInfo i = info.get();
        return i != null && i.isLeader() && cursor.readyTerm() >= 0 && i.getCurrentTerm() == cursor.readyTerm();
    }

    @Override
    public void handOver(Mutation mutation, CompletableFuture<Outcome> future) {
        if (forwardedOrigins.containsKey(mutation)) {
            future.complete(NOT_DECIDING);
            return;
        }
        // every attempt of this forward, and the queue entry it may become, carry one intent id
        IntentTags.Tag own = new IntentTags.Tag(IntentTags.fresh(), false, false);
        IntentTags.Tag tag = tags.tag(mutation, own); // a replay comes tagged with its intent's id
        CompletableFuture<Outcome> forwarded = new CompletableFuture<>();
        forwarded.whenComplete((outcome, fault) -> {
            try {
                if (fault != null) {
                    future.completeExceptionally(fault);
                } else if (outcome == Forwarder.NO_LEADER || (outcome instanceof Outcome.Refused r
                        && r.reason() == Outcome.Reason.COMMIT_UNKNOWN)) {
                    future.complete(queue.apply(mutation, (Outcome.Refused) outcome)); // no quorum in time
                } else {
                    future.complete(outcome);
                }
            } finally {
                if (tag == own) {
                    tags.untag(mutation, own);
                }
            }
        });
        forwarder.forward(mutation, tag, forwarded);
    }

    /** This node decided it but no quorum confirmed it in time: queued, unless another node took it. */
    @Override
    public Outcome unconfirmed(Mutation mutation, Outcome.Refused refusal) {
        if (forwardedOrigins.containsKey(mutation)) {
            return refusal; // the follower that took it queues it, when told the outcome is unknown
        }
        IntentTags.Tag tag = tags.of(mutation);
        try {
            return queue.apply(mutation, refusal); // under the intent id the record may still commit with
        } finally {
            if (tag != null && tag.assignedByJournal()) {
                tags.untag(mutation, tag);
            }
        }
    }

    /** A write whose intent id is in a proposal still in flight: settled before it is looked up. */
    @Override
    public boolean awaitsCommit(Mutation mutation) {
        IntentTags.Tag tag = tags.of(mutation);
        return tag != null && inFlight.test(tag.intentId());
    }

    /**
     * A write whose intent id has committed already is answered with that decision, not decided
     * again: the first attempt of a forward committed but its answer was lost (a closed stream, a
     * leader that died), or a queued intent had committed after all. A replay's hit is answered
     * as a replayed request, which reconciles it as {@code noop_already_applied}. Only a leader
     * that has applied every record before its term decides, so it holds every committed id.
     */
    @Override
    public Outcome decidedBefore(Mutation mutation) {
        IntentTags.Tag tag = tags.of(mutation);
        if (tag == null) {
            return null;
        }
        Outcome.Decided first = decided.outcome(tag.intentId());
        if (first == null) {
            return null;
        }
        if (tag.replay()) {
            return new Outcome.Replayed(first.storedResponse() == null ? "" : first.storedResponse());
        }
        return first;
    }

    /** Stops deciding for good: this node's state can no longer be trusted. */
    void fail(String why) {
        failure = why;
    }

    /** Why this node stopped deciding, or null. */
    String failure() {
        return failure;
    }
}
