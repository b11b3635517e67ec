package dev.synapsehub.net.extension;

import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * The leader of a replicated hub (a mesh), as an extension sees it: work that the cluster must
 * do from one place (federation's one connection to each owning hub) is asked of the current
 * leader, from any node, and the node learns when its own leadership changes. The mesh
 * implements it; a single hub has none.
 */
public interface ClusterLeader {
    /** True when this node leads now and decides. Any thread; never blocks. */
    boolean leadsHere();

    /**
     * Hands {@code body} to the handler {@link #serve served} under {@code service} on the
     * current leader (this node's own when it leads) and completes with its answer. While no
     * leader takes it (an election, a leader not ready yet) it is sent again, until
     * {@code bound}; it then fails {@link Unreached}, and the handler never saw it. Any other
     * failure leaves it unknown whether the handler saw it. The handler runs at most once per
     * ask, also when an answer is lost on the way back and the ask is sent again. Never blocks.
     * <p>Order, best effort within limits: asks of one node reach one leader's handler in the
     * order this node made them, an ask that came early being held a short while (the mesh:
     * 200 ms) for an earlier one that may never come, after which it goes on without it. The
     * order holds only from the first ask that leader sees of the node (an earlier ask arriving
     * later runs at once, not before it); not across a leader change (the new leader starts each
     * node's order afresh, and the old one refuses what it still held, to be sent again); and not
     * across a restart of the asking node (each start is a new incarnation with its own order,
     * never joined to nor ordered against the previous one's asks). A handler that needs order
     * beyond that must carry its own (a key, a version).
     */
    CompletableFuture<ObjectNode> ask(String service, ObjectNode body, Duration bound);

    /**
     * Registers the leader-side handler of {@code service}, before the hub serves. It runs on a
     * Raft thread for asks of other nodes and on the asker's thread for this node's own: it must
     * not block.
     */
    void serve(String service, Function<ObjectNode, CompletableFuture<ObjectNode>> handler);

    /** Calls {@code listener} (any thread, must not block) whenever this node's leadership may have changed. */
    void onLeadershipChange(Runnable listener);

    /** No leader took the ask within its bound: its handler never saw it. */
    final class Unreached extends IOException {
        public Unreached(String message) {
            super(message);
        }
    }
}
