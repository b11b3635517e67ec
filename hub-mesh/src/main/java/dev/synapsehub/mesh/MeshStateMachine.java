package dev.synapsehub.mesh;

import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;

/**
 * The Ratis state machine of a mesh node. It owns no coordination state: it judges each
 * committed record by what every node sees alike (protocol, fence, base index), hands an
 * accepted record to the node's actor, and answers the proposer {@code committed} or
 * {@code rejected}. Ratis calls {@link #applyTransaction} on one thread in log order, and
 * {@link #notifyLeaderReady} on the same thread once this leader's first entry of its term
 * is applied, so the actor sees every earlier record before it may decide.
 */
final class MeshStateMachine extends BaseStateMachine {
    private static final System.Logger LOG = System.getLogger(MeshStateMachine.class.getName());

    /** The node side: the actor world behind the state machine. */
    interface Replica {
        /** An accepted record at {@code index}, in log order; must not block. */
        void committed(long index, MeshEnvelope record, ReplicatedBatch batch);

        /** This node leads {@code term} and has applied everything before the term. */
        void leaderReady();

        /** A leader became known to this node (itself or another). */
        default void leaderKnown() {
        }

        /** A follower's forwarded mutation, on the leader; answers the encoded reply. */
        CompletableFuture<Message> forwarded(byte[] request);
    }

    private final Replica replica;
    private final String nodeId;
    private final EventsJson events = new EventsJson();
    /** Log index of the last accepted record (the base every new decision must name). */
    private long lastAccepted;
    private volatile long lastAcceptedSeen;
    private volatile long rejected;
    private volatile long highestOwnOriginSeq;

    MeshStateMachine(Replica replica, String nodeId) {
        this.replica = replica;
        this.nodeId = nodeId;
    }

    @Override
    public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
        LogEntryProto entry = trx.getLogEntry();
        long index = entry.getIndex();
        Verdict verdict = judge(entry.getStateMachineLogEntry().getLogData().toByteArray(), entry.getTerm(), index);
        updateLastAppliedTermIndex(entry.getTerm(), index);
        return CompletableFuture.completedFuture(Message.valueOf(verdict.wire()));
    }

    /** The deterministic verdict of seed 001 §8: stale epochs and stale bases are fenced. */
    Verdict judge(byte[] data, long term, long index) {
        MeshEnvelope record;
        ReplicatedBatch batch;
        try {
            record = MeshEnvelope.fromBytes(data);
            batch = ReplicatedBatch.fromJson(record.payload(), events);
        } catch (IllegalArgumentException e) {
            return reject(index, "malformed record: " + e.getMessage());
        }
        if (nodeId.equals(record.originNodeId()) && record.originSeq() > highestOwnOriginSeq) {
            highestOwnOriginSeq = record.originSeq(); // rebuilt on restart from the log (seed 001 §11 step 2)
        }
        FenceToken fence;
        try {
            fence = record.fence();
        } catch (IllegalArgumentException e) {
            return reject(index, e.getMessage());
        }
        if (record.leaseEpoch() != term || fence.term() != term) {
            return reject(index, "stale epoch: decided in term " + record.leaseEpoch() + ", committed in term " + term);
        }
        if (!fence.leaderId().equals(record.originNodeId())) {
            return reject(index, "fence names leader " + fence.leaderId() + " but the record comes from "
                    + record.originNodeId());
        }
        if (fence.baseIndex() != lastAccepted) {
            return reject(index, "stale base: decided on index " + fence.baseIndex() + ", last accepted is "
                    + lastAccepted);
        }
        lastAccepted = index;
        lastAcceptedSeen = index;
        replica.committed(index, record, batch);
        return Verdict.COMMITTED;
    }

    private Verdict reject(long index, String reason) {
        rejected++;
        LOG.log(System.Logger.Level.WARNING, "record at index " + index + " rejected_fenced: " + reason);
        return new Verdict(false, reason);
    }

    @Override
    public void notifyLeaderChanged(RaftGroupMemberId member, RaftPeerId leader) {
        if (leader != null) {
            replica.leaderKnown();
        }
    }

    @Override
    public void notifyLeaderReady() {
        replica.leaderReady();
    }

    @Override
    public CompletableFuture<Message> query(Message request) {
        return replica.forwarded(request.getContent().toByteArray());
    }

    /** Log index of the last accepted record. */
    long lastAccepted() {
        return lastAcceptedSeen;
    }

    /** Records rejected as fenced or malformed since start (including replayed ones). */
    long rejected() {
        return rejected;
    }

    /** The highest origin seq of this node's records seen in the log. */
    long highestOwnOriginSeq() {
        return highestOwnOriginSeq;
    }

    /** What a proposer is told: {@code committed}, or {@code rejected: reason}. */
    record Verdict(boolean committed, String reason) {
        static final Verdict COMMITTED = new Verdict(true, null);

        String wire() {
            return committed ? "committed" : "rejected: " + reason;
        }

        static Verdict parse(Message m) {
            String s = m.getContent().toString(StandardCharsets.UTF_8);
            return "committed".equals(s) ? COMMITTED : new Verdict(false, s.startsWith("rejected: ") ? s.substring(10) : s);
        }
    }
}
