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
    /** How the refusal of a write whose intent id may have been forgotten at the bound begins. */
    static final String FORGOTTEN = "The mesh can no longer tell whether this write committed";

    /** A write that may be one whose id was forgotten at the bound: refused, never decided a second time. */
    static Outcome.Refused forgotten(String intentId) {
        return new Outcome.Refused(Outcome.Reason.COMMIT_UNKNOWN, FORGOTTEN + " (intent " + intentId + " was handed"
                + " over before an intent id of its node that had to be forgotten: more were kept for replay than the"
                + " mesh remembers); it is not decided again. Check the state before retrying it.");
    }

    /** True for {@link #forgotten}'s refusal (also as it comes back from a forward). */
    static boolean isForgotten(Outcome outcome) {
        return outcome instanceof Outcome.Refused r && r.reason() == Outcome.Reason.COMMIT_UNKNOWN
                && r.message() != null && r.message().startsWith(FORGOTTEN);
    }

    private final String nodeId;
    private final ReplicaCursor cursor;
    private final Supplier<DivisionInfo> info;
    private final Forwarder forwarder;
    private final Map<Mutation, String> forwardedOrigins;
    private final BiFunction<Mutation, Outcome.Refused, Outcome> queue;
    private final IntentTags tags;
    private final DecidedIntents decided;
    private volatile String failure;
    /** Confirms this node still leads now (a fresh majority of term answers), or fails. */
    private final Supplier<CompletableFuture<Void>> confirmLead;
    private final long confirmTimeoutMillis;

    /**
     * @param queue what becomes of a write no quorum committed in time: queued (seed 001 §9) or
     *     answered with the refusal
     */
    MeshSite(String nodeId, ReplicaCursor cursor, Supplier<DivisionInfo> info, Forwarder forwarder,
             Map<Mutation, String> forwardedOrigins, BiFunction<Mutation, Outcome.Refused, Outcome> queue,
             IntentTags tags, DecidedIntents decided, Supplier<CompletableFuture<Void>> confirmLead,
             long confirmTimeoutMillis) {
        this.confirmLead = confirmLead;
        this.confirmTimeoutMillis = confirmTimeoutMillis;
        this.nodeId = nodeId;
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
        // every attempt of this forward, and the queue entry it may become, carry one intent id, and the
        // index this node has applied now: the write's record, if any, commits after it (its hand-over base)
        IntentTags.Tag own = IntentTags.Tag.own(IntentTags.fresh(), false, false, cursor.appliedIndex());
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

    /**
     * A write whose intent id has committed already is answered with that decision, not decided
     * again: the first attempt of a forward committed but its answer was lost (a closed stream, a
     * leader that died), or a queued intent had committed after all. A replay's hit is answered
     * as a replayed request, which reconciles it as {@code noop_already_applied}. Only a leader
     * that has applied every record before its term decides, so it holds every committed id its
     * origin may still send. A write of an origin whose ids had to be forgotten at the bound, and
     * handed over before the newest of them, may be one of them: it is refused, not decided.
     */
    @Override
    public Outcome decidedBefore(Mutation mutation) {
        IntentTags.Tag tag = tags.of(mutation);
        if (tag == null) {
            return null;
        }
        Outcome.Decided first = decided.outcome(tag.intentId());
        if (first == null) {
            String origin = tag.forwardedBy() == null ? nodeId : tag.forwardedBy();
            return decided.mayHaveForgotten(origin, tag.base()) ? forgotten(tag.intentId()) : null;
        }
        if (tag.replay()) {
            return new Outcome.Replayed(first.storedResponse() == null ? "" : first.storedResponse());
        }
        return first;
    }

    /**
     * A batch decided without events (a refusal from this node's state) is answered only once a
     * majority confirmed, after it was decided, that this node still leads: a deposed leader
     * that does not know it yet (up to the election timeout) would answer from a stale state.
     */
    @Override
    public boolean stillDecides() {
        if (!decidesHere()) {
            return false;
        }
        try {
            confirmLead.get().get(confirmTimeoutMillis, java.util.concurrent.TimeUnit.MILLISECONDS);
            return true;
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /**
     * A decision without events this node could not confirm: a follower's forward is told this
     * node stopped leading (it retries at the new leader); this node's own agents are told to retry.
     */
    @Override
    public Outcome notConfirmed(Mutation mutation) {
        if (mutation != null && forwardedOrigins.containsKey(mutation)) {
            return NOT_DECIDING;
        }
        return NOT_CONFIRMED;
    }

    /** The answer to this node's own agents when it could not confirm it still leads. */
    static final Outcome.Refused NOT_CONFIRMED = new Outcome.Refused(Outcome.Reason.BUSY, "This mesh node could not"
            + " confirm it still leads (it may have lost the lead); nothing was decided. Retry, through another node"
            + " if it persists.");

    /** Stops deciding for good: this node's state can no longer be trusted. */
    void fail(String why) {
        failure = why;
    }

    /** Why this node stopped deciding, or null. */
    String failure() {
        return failure;
    }
}
