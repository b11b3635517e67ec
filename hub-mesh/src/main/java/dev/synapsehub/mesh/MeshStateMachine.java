package dev.synapsehub.mesh;

import dev.synapsehub.core.state.StateImage;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.SnapshotInfo;
import org.apache.ratis.statemachine.StateMachineStorage;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.util.LifeCycle;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

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

        /** The leader this node knows changed (to another, to itself, or to none during an election). */
        default void leaderChanged() {
        }

        /** A follower's forwarded mutation, on the leader; answers the encoded reply. */
        CompletableFuture<Message> forwarded(byte[] request);

        /**
         * The state as of log index {@code index} comes from a snapshot (at start, or installed
         * from the leader): it replaces what the node's state holds, before any later record.
         */
        default void restored(long index, StateImage image, DecidedIntents.Memory intents) {
        }
    }

    private final Replica replica;
    private final String nodeId;
    private final EventsJson events = new EventsJson();
    /** Log index of the last accepted record (the base every new decision must name). */
    private long lastAccepted;
    private volatile long lastAcceptedSeen;
    private volatile long rejected;
    private volatile long highestOwnOriginSeq;
    /** Per origin node, the highest origin seq seen: carried by snapshots, the log before them is gone. */
    private final Map<String, Long> originSeqs = new ConcurrentHashMap<>();
    private final MeshSnapshots snapshots;

    MeshStateMachine(Replica replica, String nodeId) {
        this(replica, nodeId, new MeshSnapshots(nodeId));
    }

    MeshStateMachine(Replica replica, String nodeId, MeshSnapshots snapshots) {
        this.replica = replica;
        this.nodeId = nodeId;
        this.snapshots = snapshots;
    }

    // ------------------------------------------------------------------ snapshots (seed 001 §11, issue 13)

    @Override
    public void initialize(RaftServer server, RaftGroupId groupId, RaftStorage storage) throws IOException {
        super.initialize(server, groupId, storage);
        getLifeCycle().startAndTransition(() -> {
            snapshots.init(storage);
            restore(snapshots.load(false));
        }, IOException.class);
    }

    @Override
    public void pause() {
        getLifeCycle().transition(LifeCycle.State.PAUSING);
        getLifeCycle().transition(LifeCycle.State.PAUSED);
    }

    /** Ratis installed the leader's snapshot (this node was too far behind): start over from it. */
    @Override
    public void reinitialize() throws IOException {
        MeshSnapshotFile installed = snapshots.load(true);
        LOG.log(System.Logger.Level.INFO, "mesh node " + nodeId + " installed the leader's snapshot at index "
                + installed.index());
        restore(installed);
        getLifeCycle().transition(LifeCycle.State.STARTING);
        getLifeCycle().transition(LifeCycle.State.RUNNING);
    }

    private void restore(MeshSnapshotFile file) {
        if (file == null) {
            return;
        }
        lastAccepted = file.index(); // a snapshot is taken at an accepted record: the next base
        lastAcceptedSeen = file.index();
        file.originSeqs().forEach((origin, seq) -> originSeqs.merge(origin, seq, Math::max));
        highestOwnOriginSeq = Math.max(highestOwnOriginSeq, originSeqs.getOrDefault(nodeId, 0L));
        setLastAppliedTermIndex(TermIndex.valueOf(file.term(), file.index()));
        replica.restored(file.index(), file.image(), file.memory());
    }

    @Override
    public StateMachineStorage getStateMachineStorage() {
        return snapshots.storage();
    }

    @Override
    public SnapshotInfo getLatestSnapshot() {
        return snapshots.latest();
    }

    /** Writes the node's newest captured image (never waits for the actor) and returns the snapshot index. */
    @Override
    public long takeSnapshot() {
        return snapshots.write(index -> {
            try {
                return getServer().join().getDivision(getGroupId()).getRaftLog().getTermIndex(index);
            } catch (IOException | RuntimeException e) {
                return null;
            }
        });
    }

    /** The snapshots (for the node's status and captures). */
    MeshSnapshots snapshots() {
        return snapshots;
    }

    /** Per origin node, the highest origin seq seen so far. */
    Map<String, Long> originSeqs() {
        return Map.copyOf(originSeqs);
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
        originSeqs.merge(record.originNodeId(), record.originSeq(), Math::max);
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
        LOG.log(System.Logger.Level.WARNING, "record at index " + index + " rejected_fenced: " + LogRedactor.scrub(reason));
        return new Verdict(false, reason);
    }

    @Override
    public void notifyLeaderChanged(RaftGroupMemberId member, RaftPeerId leader) {
        if (leader != null) {
            replica.leaderKnown();
        }
        replica.leaderChanged();
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
