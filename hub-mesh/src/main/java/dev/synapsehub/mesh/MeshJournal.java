package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.actor.DecidedMutation;
import dev.synapsehub.core.actor.DecisionLog;
import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.PipelinedLog;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.journal.CommitUnknownException;
import dev.synapsehub.core.journal.Journal;
import dev.synapsehub.core.journal.JournalException;
import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.journal.SqliteJournal;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
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
 *
 * <p>Pipelined ({@link PipelinedLog}): up to {@code window} records are in flight at once. The
 * first of a window names the last accepted record's index as its base, as a single proposal
 * does; each later one is decided on top of the records still in flight, whose indexes are not
 * known yet, so it names the same base and chains to its predecessor by event seq
 * ({@code precondition.afterSeq}): the state machine accepts it only if the last accepted record
 * was committed in the same term and ends at that seq, which in a term whose windows never
 * failed is its predecessor and nothing else. After a failure in a term this node proposes one
 * record at a time for the rest of that term, so a chain never spans a failed record.
 */
final class MeshJournal implements PipelinedLog {
    private static final System.Logger LOG = System.getLogger(MeshJournal.class.getName());

    /** Proposes a record to Raft as this node; records proposed one after another are appended in that order. */
    interface Proposer {
        /**
         * @return the verdict and the record's log index, once committed; fails with
         *     {@link CommitUnknownException} when the outcome is not known, with another
         *     {@link JournalException} when the record was certainly not appended
         * @throws JournalException when the record was certainly not appended
         */
        CompletableFuture<Proposal> propose(byte[] record) throws JournalException;
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
    private final int window;
    private final long commitTimeoutMillis;
    /** Proposals in flight, oldest first (actor thread). */
    private final Deque<InFlight> inFlight = new ArrayDeque<>();
    /** Intent ids of the writes in flight (actor thread). */
    private final Set<String> intentsInFlight = new HashSet<>();
    /** A term in which a proposal failed: no more chaining in it (actor thread). */
    private long brokenTerm = -1;
    private volatile int mostInFlight;

    MeshJournal(String nodeId, String hubId, ReplicaCursor cursor, Proposer proposer, Journal local, EdgeBinding edge,
                Map<Mutation, String> forwardedOrigins, LongSupplier highestOwnOriginSeq, IntentTags tags,
                DecidedIntents decidedIntents, LongSupplier hold, int window, long commitTimeoutMillis) {
        if (window < 1) {
            throw new IllegalArgumentException("the proposal window must be at least 1, not " + window);
        }
        this.hold = hold;
        this.window = window;
        this.commitTimeoutMillis = commitTimeoutMillis;
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
        return propose(batch, decided).settle();
    }

    @Override
    public int window() {
        long term = cursor.readyTerm();
        if (term == brokenTerm) {
            return 1; // a record failed in this term: one at a time, each on a known base, until the next term
        }
        if (!inFlight.isEmpty() && inFlight.peekLast().term != term) {
            return 1; // never chain across terms
        }
        return window;
    }

    @Override
    public Commit propose(List<CoordinationEvent> batch, List<DecidedMutation> decided) throws JournalException {
        long term = cursor.readyTerm();
        if (term < 0) {
            throw new JournalException("this mesh node does not lead a term; nothing was proposed");
        }
        InFlight previous = inFlight.peekLast();
        if (previous != null && (previous.term != term || term == brokenTerm)) {
            throw new JournalException("the term changed with records in flight; nothing was proposed");
        }
        List<Mutation> assigned = new ArrayList<>();
        long firstSeq = previous == null ? cursor.appliedSeq() + 1 : previous.payload.lastSeq() + 1;
        ReplicatedBatch payload = new ReplicatedBatch(firstSeq, batch, decisions(decided, assigned));
        long base = cursor.appliedIndex(); // the last accepted record whose index this node knows
        MeshEnvelope record = envelope(term, base, previous == null ? -1 : previous.payload.lastSeq(), payload, batch);
        CompletableFuture<Proposal> future;
        try {
            future = proposer.propose(record.toBytes());
        } catch (JournalException | RuntimeException e) {
            untag(assigned);
            throw e;
        }
        InFlight proposed = new InFlight(term, base, record, payload, assigned, future,
                System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(commitTimeoutMillis));
        inFlight.addLast(proposed);
        mostInFlight = Math.max(mostInFlight, inFlight.size());
        proposed.intents.forEach(intentsInFlight::add);
        return proposed;
    }

    /** True when a write with this intent id is in a proposal still in flight (actor thread). */
    boolean intentInFlight(String intentId) {
        return intentId != null && intentsInFlight.contains(intentId);
    }

    /** The most proposals this node had in flight at once (a figure for tests and status). */
    int mostInFlight() {
        return mostInFlight;
    }

    /** A proposed record, settled on the actor thread in proposal order. */
    private final class InFlight implements Commit {
        final long term;
        final long base;
        final MeshEnvelope record;
        final ReplicatedBatch payload;
        final List<Mutation> assigned;
        final CompletableFuture<Proposal> future;
        final CompletableFuture<Void> done = new CompletableFuture<>();
        final long deadlineNanos;
        final List<String> intents = new ArrayList<>();

        InFlight(long term, long base, MeshEnvelope record, ReplicatedBatch payload, List<Mutation> assigned,
                 CompletableFuture<Proposal> future, long deadlineNanos) {
            this.term = term;
            this.base = base;
            this.record = record;
            this.payload = payload;
            this.assigned = assigned;
            this.future = future;
            this.deadlineNanos = deadlineNanos;
            for (ReplicatedBatch.Decision d : payload.decisions()) {
                if (d.intentId() != null) {
                    intents.add(d.intentId());
                }
            }
            future.whenComplete((p, e) -> done.complete(null));
            done.completeOnTimeout(null, commitTimeoutMillis, TimeUnit.MILLISECONDS);
        }

        @Override
        public CompletableFuture<?> done() {
            return done;
        }

        @Override
        public List<JournaledEvent> settle() throws JournalException {
            Proposal proposal;
            try {
                proposal = await();
            } catch (CommitUnknownException e) {
                forget(true);
                throw e; // the ids stay: the site queues each write under the id its record may still commit with
            } catch (JournalException | RuntimeException e) {
                forget(false);
                throw e;
            }
            if (!proposal.verdict().committed()) {
                forget(false);
                throw new JournalException("record " + record.recordId() + " was rejected_fenced: "
                        + proposal.verdict().reason() + "; nothing was applied");
            }
            forget(null);
            decidedIntents.record(proposal.index(), payload);
            copyLocally(payload, "proposed");
            cursor.applied(proposal.index(), payload.lastSeq());
            List<CoordinationEvent> batch = payload.events();
            List<JournaledEvent> committed = new ArrayList<>(batch.size());
            for (int i = 0; i < batch.size(); i++) {
                committed.add(new JournaledEvent(payload.firstSeq() + i, batch.get(i)));
            }
            return committed;
        }

        private Proposal await() throws JournalException {
            long left = deadlineNanos - System.nanoTime();
            try {
                return future.get(Math.max(0, left), TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                throw new CommitUnknownException("no quorum committed the record within " + commitTimeoutMillis
                        + " ms", e);
            } catch (ExecutionException e) {
                Throwable cause = e.getCause();
                if (cause instanceof JournalException j) {
                    throw j;
                }
                throw new CommitUnknownException("the proposal failed: " + cause, cause);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new CommitUnknownException("interrupted while the record was proposed", e);
            }
        }

        @Override
        public void abandoned(boolean unknown) {
            forget(unknown);
        }

        /**
         * Leaves the window. {@code failedUnknown}: null when committed, true when the outcome is
         * unknown (tags kept for the queue), false when it certainly did not commit.
         */
        private void forget(Boolean failedUnknown) {
            inFlight.remove(this);
            intents.forEach(intentsInFlight::remove);
            if (failedUnknown == null || !failedUnknown) {
                untag(assigned);
            }
            if (failedUnknown != null) {
                brokenTerm = Math.max(brokenTerm, term);
            }
        }
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

    /**
     * @param afterSeq the last event seq of the record in flight this one is decided on top of,
     *     or -1 when none is (the base is then the last accepted record, as seed 001 §8 says)
     */
    private MeshEnvelope envelope(long term, long base, long afterSeq, ReplicatedBatch payload,
                                  List<CoordinationEvent> batch) {
        originSeq = Math.max(originSeq, highestOwnOriginSeq.getAsLong()) + 1;
        FenceToken fence = new FenceToken(term, nodeId, base);
        ObjectNode precondition = MeshJson.MAPPER.createObjectNode();
        precondition.put("baseIndex", fence.baseIndex());
        precondition.put("expectedEpoch", term);
        if (afterSeq >= 0) {
            precondition.put(MeshStateMachine.AFTER_SEQ, afterSeq);
        }
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
