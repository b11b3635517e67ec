package dev.synapsehub.mesh;

import dev.synapsehub.core.actor.DecisionSite;
import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.Outcome;
import org.apache.ratis.server.DivisionInfo;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
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
    private volatile String failure;

    MeshSite(ReplicaCursor cursor, Supplier<DivisionInfo> info, Forwarder forwarder,
             Map<Mutation, String> forwardedOrigins) {
        this.cursor = cursor;
        this.info = info;
        this.forwarder = forwarder;
        this.forwardedOrigins = forwardedOrigins;
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
        forwarder.forward(mutation, future);
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
