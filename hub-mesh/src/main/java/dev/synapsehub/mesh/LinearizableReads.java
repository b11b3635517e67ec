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
 * node obtains a read index from the leader (Ratis' ReadIndex: the leader confirms it still
 * leads with a quorum and names its commit index; the node waits until its Raft state machine
 * has applied that far) and then until its actor holds every record accepted up to there. A
 * read after that sees every write acknowledged before the request arrived, whichever node
 * took it. Without a leader and a quorum within the commit timeout the read is refused
 * ({@code busy}), never answered from a state that may be behind.
 */
final class LinearizableReads {
    /** The request member that asks for it. */
    static final String FIELD = "consistency";
    /** Its value. */
    static final String LINEARIZABLE = "linearizable";
    /** The query the node's own state machine answers once Ratis confirmed the read index. */
    static final String QUERY = "read_index";

    /** What the reads need of the node. */
    interface Node {
        /**
         * Completes on the actor thread after every record the state machine handed to the actor
         * so far is applied (the actor applies replicated records in order).
         */
        CompletableFuture<Void> afterAppliedSoFar();
    }

    private final RaftClientRpc rpc;
    private final RaftGroupId groupId;
    private final RaftPeerId self;
    private final Node node;
    private final long timeoutMillis;
    private final ClientId clientId = ClientId.randomId();
    private final AtomicLong callIds = new AtomicLong();
    private final AtomicLong served = new AtomicLong();
    private final AtomicLong refused = new AtomicLong();

    LinearizableReads(RaftClientRpc rpc, RaftGroupId groupId, RaftPeerId self, Node node, long timeoutMillis) {
        this.rpc = rpc;
        this.groupId = groupId;
        this.self = self;
        this.node = node;
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
        ObjectNode query = MeshJson.MAPPER.createObjectNode();
        query.put("protocol", MeshProtocol.PROTOCOL);
        query.put("version", MeshProtocol.VERSION);
        query.put(MeshQueueProbe.QUERY, QUERY);
        // a linearizable read to this node's own server: a follower asks the leader for the read index
        RaftClientRequest request = RaftClientRequest.newBuilder().setClientId(clientId).setServerId(self)
                .setGroupId(groupId).setCallId(callIds.incrementAndGet())
                .setMessage(Message.valueOf(ByteString.copyFrom(MeshJson.bytes(query))))
                .setType(RaftClientRequest.readRequestType(false)).setTimeoutMs(timeoutMillis).build();
        CompletableFuture<RaftClientReply> sent;
        try {
            sent = rpc.sendRequestAsyncUnordered(request);
        } catch (RuntimeException e) {
            return refuse("the read index request could not be sent: " + LogRedactor.scrub(e));
        }
        return sent.orTimeout(timeoutMillis, TimeUnit.MILLISECONDS).handle((reply, failure) -> {
            if (failure != null) {
                return this.<Void>refuse("no leader confirmed a read index: " + LogRedactor.scrub(failure));
            }
            if (!reply.isSuccess()) {
                return this.<Void>refuse("no leader confirmed a read index: " + LogRedactor.scrub(reply.getException()));
            }
            return node.afterAppliedSoFar().thenRun(served::incrementAndGet);
        }).thenCompose(next -> next);
    }

    /**
     * The answer of this node's state machine to {@link #QUERY}: Ratis runs it only once this
     * node applied up to the read index, and applying hands each record to the actor at once.
     */
    static ObjectNode answer() {
        return MeshJson.MAPPER.createObjectNode().put(QUERY, true);
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
        return CompletableFuture.failedFuture(new ActorRefusedException(new Outcome.Refused(Outcome.Reason.BUSY,
                "No leader confirmed a read index within " + timeoutMillis + " ms (" + why + "); nothing was read. "
                        + "Retry, or read without consistency linearizable: the reply is then labelled with its "
                        + "staleness.")));
    }
}
