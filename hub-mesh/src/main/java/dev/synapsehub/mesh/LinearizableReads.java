package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.actor.ActorRefusedException;
import dev.synapsehub.core.actor.Outcome;
import org.apache.ratis.client.RaftClientRpc;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Linearizable reads on request (seed 001 §12, issue 13): before a read that asks for it, the
 * node obtains a read index from the leader, which takes its commit index and then confirms it
 * still leads with a fresh round of term answers from a majority ({@link LeadershipCheck}); the
 * node waits until its Raft state machine has applied that far, and then until its actor holds
 * every record accepted up to there. A read after that sees every write acknowledged before the
 * request arrived, whichever node took it. A deposed leader that still believes it leads cannot
 * confirm and so never answers. A follower asks again while no leader answers (an election), and
 * without a leader and a quorum within the commit timeout the read is refused ({@code busy}),
 * never answered from a state that may be behind.
 */
final class LinearizableReads {
    /** The request member that asks for it. */
    static final String FIELD = "consistency";
    /** Its value. */
    static final String LINEARIZABLE = "linearizable";
    /** The query a follower sends the leader for a read index. */
    static final String QUERY = "read_index";
    private static final long APPLIED_POLL_MILLIS = 5;
    /** How soon a follower asks the leader for a read index again after an attempt failed. */
    private static final long RETRY_MILLIS = 50;

    /** What the reads need of the node. */
    interface Node {
        /**
         * Completes on the actor thread after every record the state machine handed to the actor
         * so far is applied (the actor applies replicated records in order).
         */
        CompletableFuture<Void> afterAppliedSoFar();

        /** True while this node leads a term and decides. */
        default boolean decides() {
            return false;
        }

        /** The leader this node knows, or null. */
        default RaftPeerId leader() {
            return null;
        }

        /** The last log index this node knows committed. */
        default long commitIndex() {
            return -1;
        }

        /** The last log index this node's state machine applied. */
        default long appliedIndex() {
            return -1;
        }
    }

    private final RaftClientRpc rpc;
    private final RaftGroupId groupId;
    private final Node node;
    private final LeadershipCheck lead;
    private final java.util.concurrent.ScheduledExecutorService scheduler;
    private final long timeoutMillis;
    private final ClientId clientId = ClientId.randomId();
    private final AtomicLong callIds;
    private final ChannelResets resets;
    private final AtomicLong served = new AtomicLong();
    private final AtomicLong refused = new AtomicLong();

    /**
     * @param callIds shared with every other user of {@code rpc}: replies are matched by call id per server
     * @param resets shared with every other user of {@code rpc}: a reset closes the channel for them all
     */
    LinearizableReads(RaftClientRpc rpc, AtomicLong callIds, ChannelResets resets, RaftGroupId groupId, Node node,
                      LeadershipCheck lead,
                      java.util.concurrent.ScheduledExecutorService scheduler, long timeoutMillis) {
        this.rpc = rpc;
        this.callIds = callIds;
        this.resets = resets;
        this.groupId = groupId;
        this.node = node;
        this.lead = lead;
        this.scheduler = scheduler;
        this.timeoutMillis = timeoutMillis;
    }

    /** True when {@code frame} asks for a linearizable read. */
    static boolean asked(JsonNode frame) {
        return frame != null && LINEARIZABLE.equals(frame.path(FIELD).asText(null));
    }

    /**
     * Completes once this node's state holds every record committed when it was called; fails
     * with a {@code busy} {@link ActorRefusedException} when no leader confirmed a read index in time.
     */
    CompletableFuture<Void> barrier() {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        CompletableFuture<Long> index = new CompletableFuture<>();
        readIndex(index, deadline);
        return index.handle((readIndex, failure) -> {
            if (failure != null) {
                Throwable cause = failure instanceof java.util.concurrent.CompletionException && failure.getCause() != null
                        ? failure.getCause() : failure;
                return this.<Void>refuse("no leader confirmed a read index: " + LogRedactor.scrub(cause));
            }
            return appliedThrough(readIndex, deadline).thenCompose(v -> node.afterAppliedSoFar())
                    .thenRun(served::incrementAndGet);
        }).thenCompose(next -> next);
    }

    /**
     * On the leader: its commit index, once a round of term answers sent after it was taken confirmed
     * this node still leads (fails otherwise).
     */
    CompletableFuture<Long> readIndexHere() {
        long index = node.commitIndex();
        return lead.confirm().thenApply(v -> index);
    }

    /**
     * Completes {@code index} with a read index: this node's own when it leads, else the leader's,
     * asked again every {@link #RETRY_MILLIS} until {@code deadline} while none answers (an
     * election: a follower keeps the dead leader's id until its own election timer fires, then
     * knows none until one is elected; asking again is safe, a read index changes nothing). A
     * leader's own failed confirmation is final: its round already waited for the voters.
     */
    private void readIndex(CompletableFuture<Long> index, long deadline) {
        boolean here = false;
        CompletableFuture<Long> attempt;
        try { // a scheduled retry must complete the read whatever throws, never leave it waiting
            here = node.decides();
            attempt = here ? readIndexHere() : askLeader(deadline);
        } catch (RuntimeException e) {
            attempt = CompletableFuture.failedFuture(e);
        }
        boolean leads = here;
        attempt.whenComplete((i, failure) -> {
            if (failure == null) {
                index.complete(i);
                return;
            }
            if (leads || System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(RETRY_MILLIS) - deadline > 0) {
                index.completeExceptionally(failure);
                return;
            }
            try {
                scheduler.schedule(() -> readIndex(index, deadline), RETRY_MILLIS, TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.RejectedExecutionException closing) {
                index.completeExceptionally(failure);
            }
        });
    }

    private CompletableFuture<Long> askLeader(long deadline) {
        long left = Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
        RaftPeerId to = node.leader();
        if (to == null) {
            return CompletableFuture.failedFuture(new IllegalStateException("no leader known"));
        }
        ObjectNode query = MeshJson.MAPPER.createObjectNode();
        query.put("protocol", MeshProtocol.PROTOCOL);
        query.put("version", MeshProtocol.VERSION);
        query.put(MeshQueueProbe.QUERY, QUERY);
        // to the leader's state machine, which confirms its lead before it answers and says itself when it does not
        // lead (Ratis refusing it for the role would fail every request on the stream, term checks included)
        RaftClientRequest request = RaftClientRequest.newBuilder().setClientId(clientId).setServerId(to)
                .setGroupId(groupId).setCallId(callIds.incrementAndGet())
                .setMessage(Message.valueOf(ByteString.copyFrom(MeshJson.bytes(query))))
                .setType(AnyNodeRead.TYPE).setTimeoutMs(left).build();
        CompletableFuture<RaftClientReply> sent;
        ChannelResets.Sent on = resets.sent(to.toString(), System.nanoTime());
        try {
            sent = rpc.sendRequestAsyncUnordered(request);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(new IllegalStateException("the read index request could not be sent: "
                    + LogRedactor.scrub(e)));
        }
        return sent.orTimeout(left, TimeUnit.MILLISECONDS).whenComplete((reply, fault) -> {
            if (fault == null) {
                resets.answered(to.toString(), System.nanoTime());
                return;
            }
            Throwable cause = fault instanceof java.util.concurrent.CompletionException && fault.getCause() != null
                    ? fault.getCause() : fault;
            // a failed stream stays closed until its channel is reset (once per channel): the next read reconnects
            resets.reset(on, cause, () -> rpc.handleException(to, cause, true));
        }).thenApply(reply -> {
            if (!reply.isSuccess()) {
                throw new IllegalStateException(LogRedactor.scrub(reply.getException()));
            }
            JsonNode json = MeshJson.tree(reply.getMessage().getContent().toByteArray());
            if (!json.path(QUERY).isIntegralNumber()) {
                throw new IllegalStateException("the leader " + to + " did not confirm it leads: "
                        + json.path("error").asText("no read index"));
            }
            return json.path(QUERY).asLong();
        });
    }

    /** Completes once this node's state machine applied {@code index}; fails at {@code deadline}. */
    private CompletableFuture<Void> appliedThrough(long index, long deadline) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        Runnable[] look = new Runnable[1];
        look[0] = () -> {
            if (node.appliedIndex() >= index) {
                done.complete(null);
            } else if (System.nanoTime() - deadline > 0) {
                done.completeExceptionally(new ActorRefusedException(busy("this node did not apply the read index "
                        + index + " in time")));
                refused.incrementAndGet();
            } else {
                try {
                    scheduler.schedule(look[0], APPLIED_POLL_MILLIS, TimeUnit.MILLISECONDS);
                } catch (java.util.concurrent.RejectedExecutionException closing) {
                    refused.incrementAndGet();
                    done.completeExceptionally(new ActorRefusedException(busy("this node is closing")));
                }
            }
        };
        look[0].run();
        return done;
    }

    /** The leader's answer to {@link #QUERY}: its read index, or why it has none. */
    static ObjectNode answer(Long readIndex, Throwable failure) {
        ObjectNode o = MeshJson.MAPPER.createObjectNode();
        if (failure == null) {
            o.put(QUERY, readIndex);
        } else {
            Throwable cause = failure instanceof java.util.concurrent.CompletionException && failure.getCause() != null
                    ? failure.getCause() : failure;
            o.put("error", LogRedactor.scrub(String.valueOf(cause.getMessage())));
        }
        return o;
    }

    /** Linearizable reads served since start. */
    long served() {
        return served.get();
    }

    /** Linearizable reads refused since start (no leader or quorum in time). */
    long refused() {
        return refused.get();
    }

    private <T> CompletableFuture<T> refuse(String why) {
        refused.incrementAndGet();
        return CompletableFuture.failedFuture(new ActorRefusedException(busy(why)));
    }

    private Outcome.Refused busy(String why) {
        return new Outcome.Refused(Outcome.Reason.BUSY, "No leader confirmed a read index within " + timeoutMillis
                + " ms (" + why + "); nothing was read. Retry, or read without consistency linearizable: the reply is"
                + " then labelled with its staleness.");
    }
}
