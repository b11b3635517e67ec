package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.actor.DecidedMutation;
import dev.synapsehub.core.actor.DecisionLog;
import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.journal.CommitUnknownException;
import dev.synapsehub.core.journal.Journal;
import dev.synapsehub.core.journal.JournalException;
import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.journal.SqliteJournal;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * The journal of a mesh node's actor: the Raft log, with a local copy.
 *
 * <p>On the leader, {@link #append(List, List)} turns the actor's group commit into one
 * replicated record (the events, and the decisions for the other nodes to publish), proposes it
 * under the term the node leads and the index its state has reached, and returns once a quorum
 * committed it and the state machine accepted it. It then copies the events into the node's own
 * journal (SQLite with {@code --db}), which serves mailbox replay. A rejected record fails the
 * append (nothing applied); a proposal that lost contact fails it as
 * {@link CommitUnknownException} (the record may still commit: it is then applied like any
 * other node's, when it arrives). Followers never append: their actor applies committed records
 * through {@code applyReplicated}.
 */
final class MeshJournal implements DecisionLog {
    private static final System.Logger LOG = System.getLogger(MeshJournal.class.getName());

    /** Proposes a record to Raft as this node and waits for its verdict. */
    interface Proposer {
        /**
         * @return the verdict and the record's log index
         * @throws CommitUnknownException when the outcome is not known
         * @throws JournalException when the record was certainly not appended
         */
        Proposal propose(byte[] record) throws JournalException;
    }

    /** A committed proposal's verdict and index. */
    record Proposal(MeshStateMachine.Verdict verdict, long index) {
    }

    private final String nodeId;
    private final String hubId;
    private final ReplicaCursor cursor;
    private final Proposer proposer;
    private final Journal local;
    private final EdgeBinding edge;
    private final Map<Mutation, String> forwardedOrigins;
    private final LongSupplier highestOwnOriginSeq;
    private final IntentTags tags;
    private final DecidedIntents decidedIntents;
    /** This node's hold now (its own decisions carry it, as a forward does a follower's). */
    private final LongSupplier hold;
    private final ReplyCodec replies = new ReplyCodec();
    private final EventsJson events = new EventsJson();
    private long originSeq;

    MeshJournal(String nodeId, String hubId, ReplicaCursor cursor, Proposer proposer, Journal local, EdgeBinding edge,
                Map<Mutation, String> forwardedOrigins, LongSupplier highestOwnOriginSeq, IntentTags tags,
                DecidedIntents decidedIntents, LongSupplier hold) {
        this.hold = hold;
        this.nodeId = nodeId;
        this.hubId = hubId;
        this.cursor = cursor;
        this.proposer = proposer;
        this.local = local;
        this.edge = edge;
        this.forwardedOrigins = forwardedOrigins;
        this.highestOwnOriginSeq = highestOwnOriginSeq;
        this.tags = tags;
        this.decidedIntents = decidedIntents;
    }

    @Override
    public List<JournaledEvent> append(List<CoordinationEvent> batch, List<DecidedMutation> decided)
            throws JournalException {
        long term = cursor.readyTerm();
        if (term < 0) {
            throw new JournalException("this mesh node does not lead a term; nothing was proposed");
        }
        List<Mutation> assigned = new ArrayList<>();
        ReplicatedBatch payload = new ReplicatedBatch(cursor.appliedSeq() + 1, batch, decisions(decided, assigned));
        MeshEnvelope record = envelope(term, payload, batch);
        Proposal proposal;
        try {
            proposal = proposer.propose(record.toBytes());
        } catch (CommitUnknownException e) {
            throw e; // the ids stay: the site queues each write under the id its record may still commit with
        } catch (JournalException | RuntimeException e) {
            untag(assigned);
            throw e;
        }
        untag(assigned);
        if (!proposal.verdict().committed()) {
            throw new JournalException("record " + record.recordId() + " was rejected_fenced: "
                    + proposal.verdict().reason() + "; nothing was applied");
        }
        decidedIntents.record(proposal.index(), payload);
        copyLocally(payload, "proposed");
        cursor.applied(proposal.index(), payload.lastSeq());
        List<JournaledEvent> committed = new ArrayList<>(batch.size());
        for (int i = 0; i < batch.size(); i++) {
            committed.add(new JournaledEvent(payload.firstSeq() + i, batch.get(i)));
        }
        return committed;
    }

    /**
     * The batch's decisions, each with its write's intent id: the one it came with (forwarded or
     * replayed), or a fresh one for this node's own agents' strong writes, added to
     * {@code assigned}, so a write queued because this record's commit is unknown keeps the id
     * the record may still commit with.
     */
    private List<ReplicatedBatch.Decision> decisions(List<DecidedMutation> decided, List<Mutation> assigned) {
        List<ReplicatedBatch.Decision> out = new ArrayList<>(decided.size());
        for (DecidedMutation d : decided) {
            if (tags.of(d.mutation()) == null && IntentQueue.queueable(d.mutation().command())) {
                // handed over now: its record commits after the index this node holds
                tags.tag(d.mutation(), IntentTags.Tag.own(IntentTags.fresh(), false, true, cursor.appliedIndex()));
                assigned.add(d.mutation());
            }
        }
        long ownHold = -1; // taken once the batch's own writes are tagged: it counts their bases
        for (DecidedMutation d : decided) {
            String origin = forwardedOrigins.getOrDefault(d.mutation(), nodeId);
            IntentTags.Tag tag = tags.of(d.mutation());
            long hold = -1;
            if (tag != null && tag.forwardedBy() != null) {
                hold = tag.hold();
            } else if (tag != null) {
                ownHold = ownHold < 0 ? this.hold.getAsLong() : ownHold;
                hold = ownHold;
            }
            out.add(new ReplicatedBatch.Decision(origin, edge.describe(d.mutation().context()), replies.write(d.reply()),
                    d.storedResponse(), d.events().size(), tag == null ? null : tag.intentId(), hold));
        }
        return out;
    }

    private void untag(List<Mutation> assigned) {
        for (Mutation m : assigned) {
            IntentTags.Tag tag = tags.of(m);
            if (tag != null && tag.assignedByJournal()) {
                tags.untag(m, tag);
            }
        }
    }

    private MeshEnvelope envelope(long term, ReplicatedBatch payload, List<CoordinationEvent> batch) {
        originSeq = Math.max(originSeq, highestOwnOriginSeq.getAsLong()) + 1;
        FenceToken fence = new FenceToken(term, nodeId, cursor.appliedIndex());
        ObjectNode precondition = MeshJson.MAPPER.createObjectNode();
        precondition.put("baseIndex", fence.baseIndex());
        precondition.put("expectedEpoch", term);
        double createdAt = batch.get(batch.size() - 1).ts();
        return new MeshEnvelope(MeshProtocol.PROTOCOL, MeshProtocol.VERSION, nodeId + ":" + originSeq,
                MeshEnvelope.BATCH, hubId, nodeId, originSeq, WriteClass.of(batch), term, fence.wire(),
                UUID.randomUUID().toString(), EnvelopeState.INTENT, createdAt, null, payload.toJson(events), precondition);
    }

    /**
     * Copies a committed record's events into the local journal unless they are there already
     * (a restart replays the Raft log over a journal that kept them). On the leader a failure is
     * an unknown outcome, so the record is applied again when it arrives; on a follower it is
     * logged and the state goes on (the Raft log is the record of truth).
     */
    void copyLocally(ReplicatedBatch payload, String how) throws CommitUnknownException {
        if (payload.lastSeq() <= local.lastSeq()) {
            return;
        }
        try {
            // the Raft log fsynced these events before they counted: the copy skips a second fsync
            List<JournaledEvent> stored = local instanceof SqliteJournal sqlite
                    ? sqlite.appendCopy(payload.events()) : local.append(payload.events());
            if (!stored.isEmpty() && stored.get(0).seq() != payload.firstSeq()) {
                LOG.log(System.Logger.Level.ERROR, "local journal numbered a " + how + " record from seq "
                        + stored.get(0).seq() + " instead of " + payload.firstSeq() + "; mailbox seqs may be off");
            }
        } catch (JournalException | RuntimeException e) {
            throw new CommitUnknownException("the record committed but the local journal could not copy it: "
                    + e.getMessage(), e);
        }
    }

    @Override
    public List<JournaledEvent> append(List<CoordinationEvent> batch) {
        throw new UnsupportedOperationException("a mesh journal is appended with the batch's decisions");
    }

    @Override
    public void replay(Consumer<JournaledEvent> sink) {
        // the state is rebuilt from the Raft log, not from the local copy
    }

    @Override
    public List<JournaledEvent> readAfter(long afterSeq, int limit, Set<String> kinds) throws JournalException {
        return local.readAfter(afterSeq, limit, kinds);
    }

    @Override
    public long lastSeq() {
        return cursor.appliedSeq();
    }

    /** The local copy. */
    Journal local() {
        return local;
    }

    @Override
    public void close() throws JournalException {
        local.close();
    }
}
