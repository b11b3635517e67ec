package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.actor.Mutation;
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
import java.util.concurrent.CompletionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;

/**
 * Sends a follower's mutation to the leader and completes its future with the leader's outcome.
 *
 * <p>The request travels as a Raft read to the leader's state machine, which submits it to the
 * leader's actor. Every attempt carries the write's intent id ({@link IntentTags}), and a leader
 * answers an id that has committed with that first decision, so a retry is never decided twice.
 * It is retried when the reply says the leader did not decide it (not the leader, not ready, or
 * its actor no longer decides) or the stream closed or broke under it (which happens after the
 * leader committed it too: the id makes that retry safe); any other failure is an unknown outcome
 * ({@code COMMIT_UNKNOWN}), queued by the site under the same id. Should this node itself take
 * the lead while its forward retries, it decides the write on its own actor (no other node would).
 * A decided
 * outcome that changed state is released only once this node has applied those events, so the
 * agent's next read here sees its own write.
 */
final class Forwarder {
    private static final System.Logger LOG = System.getLogger(Forwarder.class.getName());
    /** The leader's answer when its actor no longer decides (it lost the lead meanwhile). */
    static final String NOT_DECIDING = "not_deciding";
    private static final long RETRY_MILLIS = 50;
    /** The answer when no leader could be reached in time (identity-compared: nothing was applied). */
    static final Outcome.Refused NO_LEADER = new Outcome.Refused(Outcome.Reason.BUSY,
            "The mesh has no leader that could decide in time; nothing was applied. Retry shortly.");

    /** What the forwarder needs from its node. */
    interface Node {
        /** The current leader's id, or null during an election. */
        RaftPeerId leader();

        /** Runs {@code release} on the actor thread once the state holds {@code seq}. */
        void whenApplied(long seq, Runnable release);

        /** True when this node leads and decides now. */
        default boolean decidesHere() {
            return false;
        }

        /**
         * This node's hold now: the lowest hand-over base among the writes it holds queued or in
         * flight, its applied index when none ({@link DecidedIntents}); -1 when not known.
         */
        default long hold() {
            return -1;
        }

        /** Decides {@code mutation} on this node's own actor and completes {@code future} with its outcome. */
        default void decideHere(Mutation mutation, CompletableFuture<Outcome> future) {
            throw new UnsupportedOperationException("this node does not decide");
        }
    }

    private final String nodeId;
    private final RaftGroupId groupId;
    private volatile RaftClientRpc rpc;
    private final Node node;
    private final MutationCodec mutations;
    private final OutcomeCodec outcomes = new OutcomeCodec();
    private final ScheduledExecutorService scheduler;
    private final long timeoutMillis;
    private final ClientId clientId = ClientId.randomId();
    private final AtomicLong callIds = new AtomicLong();
    private final AtomicLong forwarded = new AtomicLong();
    private final AtomicLong unknown = new AtomicLong();
    private final ChannelResets resets = new ChannelResets();

    Forwarder(String nodeId, RaftGroupId groupId, RaftClientRpc rpc, Node node, MutationCodec mutations,
              ScheduledExecutorService scheduler, long timeoutMillis) {
        this.nodeId = nodeId;
        this.groupId = groupId;
        this.rpc = rpc;
        this.node = node;
        this.mutations = mutations;
        this.scheduler = scheduler;
        this.timeoutMillis = timeoutMillis;
    }

    /** Forwards {@code mutation} under its intent {@code tag}; never blocks. */
    void forward(Mutation mutation, IntentTags.Tag tag, CompletableFuture<Outcome> future) {
        ObjectNode request = MeshJson.MAPPER.createObjectNode();
        request.put("protocol", MeshProtocol.PROTOCOL);
        request.put("version", MeshProtocol.VERSION);
        request.put("origin", nodeId);
        request.put("intent", tag.intentId());
        if (tag.replay()) {
            request.put("replay", true);
        }
        if (tag.base() >= 0) {
            request.put("base", tag.base()); // additive members (seed 001 §3): older leaders ignore them
        }
        long hold = node.hold(); // taken after the tag: it counts this write's own base
        if (hold >= 0) {
            request.put("hold", hold);
        }
        try {
            request.set("mutation", mutations.write(mutation));
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "cannot forward " + LogRedactor.describe(mutation), LogRedactor.safe(e));
            future.complete(new Outcome.Refused(Outcome.Reason.INTERNAL_FAULT, "Internal fault; nothing was applied."));
            return;
        }
        forwarded.incrementAndGet();
        attempt(new Request(ByteString.copyFrom(MeshJson.bytes(request)), mutation,
                new java.util.concurrent.atomic.AtomicBoolean()), future,
                System.nanoTime() + timeoutMillis * 1_000_000);
    }

    /**
     * One forwarded write and its attempts. {@code mayHaveArrived} is set once an attempt failed in
     * a way that does not prove the leader never took it (its channel closed under it, or another
     * request's refusal failed it with the rest of its stream): the write
     * may then have committed, so running out of time is answered commit_unknown, never "nothing
     * was applied".
     */
    private record Request(ByteString bytes, Mutation mutation, java.util.concurrent.atomic.AtomicBoolean mayHaveArrived) {
    }

    /**
     * True (and the write handed to this node's own actor) when this node now leads and decides:
     * it won the election while its forward was retrying, and no other node will decide it.
     */
    private boolean decidedHere(RaftPeerId leader, Request request, CompletableFuture<Outcome> future) {
        if (leader == null || !leader.toString().equals(nodeId) || !node.decidesHere()) {
            return false;
        }
        node.decideHere(request.mutation(), future); // same mutation, same intent id: decided once
        return true;
    }

    private void attempt(Request request, CompletableFuture<Outcome> future, long deadline) {
        RaftPeerId leader = node.leader();
        if (decidedHere(leader, request, future)) {
            return;
        }
        if (leader == null || leader.toString().equals(nodeId)) {
            retry(request, future, deadline); // an election, or this node leads but is not ready yet
            return;
        }
        RaftClientRequest r = RaftClientRequest.newBuilder().setClientId(clientId).setServerId(leader)
                .setGroupId(groupId).setCallId(callIds.incrementAndGet()).setMessage(Message.valueOf(request.bytes()))
                .setType(RaftClientRequest.readRequestType(true)).setTimeoutMs(timeoutMillis).build();
        CompletableFuture<RaftClientReply> sent;
        ChannelResets.Sent on = resets.sent(leader.toString(), System.nanoTime());
        try {
            sent = rpc.sendRequestAsyncUnordered(r);
        } catch (RuntimeException e) {
            retry(request, future, deadline); // nothing left this node
            return;
        }
        sent.orTimeout(timeoutMillis, TimeUnit.MILLISECONDS).whenComplete(handle(leader, on, request, future, deadline));
    }

    private BiConsumer<RaftClientReply, Throwable> handle(RaftPeerId leader, ChannelResets.Sent on, Request request,
                                                          CompletableFuture<Outcome> future, long deadline) {
        return (reply, failure) -> {
            if (failure == null) {
                resets.answered(leader.toString(), System.nanoTime());
            }
            if (failure != null) {
                Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                        ? failure.getCause() : failure;
                // a failed channel stays closed until reset (the next request reconnects), but only the channel
                // this request went on, and not one that answers others: a reset fails every forward in flight
                resets.reset(on, cause, () -> rpc.handleException(leader, cause, true));
                if (SendFailures.resendable(cause)) {
                    // a closed or broken stream, or a refusal another reply carried, fails what the leader may have
                    // taken and committed: the retry is safe under the intent id, and the deadline says unknown
                    if (!SendFailures.neverLeft(cause)) {
                        request.mayHaveArrived().set(true);
                    }
                    retry(request, future, deadline);
                } else {
                    unknown(future, "the leader did not answer: " + cause);
                }
            } else if (reply.getNotLeaderException() != null || reply.getLeaderNotReadyException() != null) {
                retry(request, future, deadline); // refused before the leader's actor saw it
            } else if (!reply.isSuccess()) {
                unknown(future, "the leader failed: " + reply.getException());
            } else {
                answered(reply.getMessage(), request, future, deadline);
            }
        };
    }

    private void answered(Message message, Request request, CompletableFuture<Outcome> future, long deadline) {
        Outcome outcome;
        try {
            JsonNode json = MeshJson.tree(message.getContent().toByteArray());
            if (NOT_DECIDING.equals(json.path("outcome").asText())) {
                retry(request, future, deadline);
                return;
            }
            outcome = outcomes.read(json);
        } catch (IllegalArgumentException e) {
            unknown(future, "the leader's answer is unreadable: " + e.getMessage());
            return;
        }
        long seq = OutcomeCodec.lastSeq(outcome);
        if (seq == 0) {
            future.complete(outcome);
            return;
        }
        Outcome decided = outcome;
        node.whenApplied(seq, () -> future.complete(decided));
        // committed for sure: if this node lags (cut off right after), answer anyway after a while
        scheduler.schedule(() -> future.complete(decided), timeoutMillis, TimeUnit.MILLISECONDS);
    }

    private void retry(Request request, CompletableFuture<Outcome> future, long deadline) {
        if (System.nanoTime() - deadline > 0) {
            if (!decidedHere(node.leader(), request, future)) {
                if (request.mayHaveArrived().get()) {
                    unknown(future, "no leader answered in time, and an earlier attempt may have reached one");
                } else {
                    future.complete(NO_LEADER);
                }
            }
            return;
        }
        scheduler.schedule(() -> attempt(request, future, deadline), RETRY_MILLIS, TimeUnit.MILLISECONDS);
    }

    private void unknown(CompletableFuture<Outcome> future, String why) {
        unknown.incrementAndGet();
        LOG.log(System.Logger.Level.WARNING, "forwarded mutation's outcome is unknown: " + LogRedactor.scrub(why));
        future.complete(new Outcome.Refused(Outcome.Reason.COMMIT_UNKNOWN, "The leader did not confirm in time; it may"
                + " still apply. Retry with the same idem_key to learn the outcome."));
    }

    /** Sends from now on through {@code wrap} applied to the current transport (tests lose replies with it). */
    void transport(java.util.function.UnaryOperator<RaftClientRpc> wrap) {
        rpc = wrap.apply(rpc);
    }

    /** Mutations forwarded since start. */
    long forwarded() {
        return forwarded.get();
    }

    /** Channel resets to {@code peer} since start. */
    long channelResets(String peer) {
        return resets.resets(peer);
    }

    /** Forwarded mutations answered COMMIT_UNKNOWN since start. */
    long unknownOutcomes() {
        return unknown.get();
    }

    /** Channel resets that threw, since start ({@code synapse_mesh_channel_reset_faults_total}). */
    long channelResetFaults() {
        return resets.failedResets();
    }
}
