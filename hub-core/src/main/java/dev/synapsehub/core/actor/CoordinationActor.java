package dev.synapsehub.core.actor;

import dev.synapsehub.core.Clock;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.journal.CommitUnknownException;
import dev.synapsehub.core.journal.Journal;
import dev.synapsehub.core.journal.JournalException;
import dev.synapsehub.core.journal.JournalInDoubtException;
import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.core.reply.Reply;
import dev.synapsehub.core.state.CoordinationState;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The serialized mutation actor (seed 000 §4): one named thread owns the state. It drains
 * what is queued, decides each command in order against the effects of those before it,
 * appends the batch's events in one journal transaction and only after the commit completes
 * the callers' futures (INV-JA-1). A failed append undoes the whole batch and refuses every
 * command in it (INV-JA-2). {@link #close()} lets an in-flight append finish and processes
 * what was already queued before the journal is closed (INV-JA-3).
 *
 * <p>Futures complete on the actor thread: callers should continue with the {@code *Async}
 * variants on their own executor so the actor never does their work.
 *
 * <p>Supervision: a {@link RuntimeException} while deciding undoes its batch and the actor goes
 * on. Anything else that escapes (an {@link Error}, or a fault outside a decision) leaves the
 * state in doubt, so the actor stops for good: it logs the cause once, refuses everything in
 * flight and everything submitted later with {@link Outcome.Reason#WRITER_FAILED}, reports itself
 * through {@link #failure()}, and tells the {@link #onFailure} listeners, whose job is to shut the
 * process down so that a service manager restarts it from the journal.
 *
 * <p>In a replicated hub two more things happen on this thread: a {@link DecisionSite} that does
 * not decide here hands each mutation over instead of deciding it, and
 * {@link #applyReplicated} runs changes that were committed elsewhere (applied for good, never
 * undone), ahead of queued submissions and never refused for a full queue.
 */
public final class CoordinationActor implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(CoordinationActor.class.getName());

    private sealed interface Task permits MutationTask, ReadTask, UpkeepTask, ReplicatedTask, Wake {
        /** {@link System#nanoTime()} when it was queued. */
        long queuedAt();
    }

    private record ReplicatedTask(Function<CoordinationState, ?> job, CompletableFuture<Object> future, long queuedAt)
            implements Task {
    }

    /** Wakes the actor when a replicated task arrives while it waits on the queue. */
    private enum Wake implements Task {
        INSTANCE;

        @Override
        public long queuedAt() {
            return System.nanoTime(); // never waits: it only wakes the loop
        }
    }

    private record MutationTask(Mutation mutation, CompletableFuture<Outcome> future, long queuedAt) implements Task {
    }

    private record ReadTask(Function<CoordinationState, ?> query, CompletableFuture<Object> future, long queuedAt)
            implements Task {
    }

    /** Journal upkeep run on the actor thread at a commit boundary (see {@link #upkeep}). */
    private record UpkeepTask(Function<CoordinationState, ?> work, CompletableFuture<Object> future, long queuedAt)
            implements Task {
    }

    /** A decided mutation waiting for its batch to commit. */
    private static final class Pending {
        final CompletableFuture<Outcome> future;
        final Mutation mutation;
        final Reply reply;
        final List<CoordinationEvent> events;
        final String storedResponse;
        final Outcome settled;
        /**
         * True when {@link #settled} comes from a decision committed before this batch began, so a
         * failure of this batch does not touch it; false when it may come from this very batch.
         */
        final boolean settledDurably;

        Pending(CompletableFuture<Outcome> future, Mutation mutation, Reply reply, List<CoordinationEvent> events,
                String stored) {
            this.future = future;
            this.mutation = mutation;
            this.reply = reply;
            this.events = events;
            this.storedResponse = stored;
            this.settled = null;
            this.settledDurably = false;
        }

        Pending(CompletableFuture<Outcome> future, Outcome settled, boolean durably) {
            this.future = future;
            this.mutation = null;
            this.reply = null;
            this.events = List.of();
            this.storedResponse = null;
            this.settled = settled;
            this.settledDurably = durably;
        }

        /** The answer when the batch fails: a durable earlier answer stands, anything else is refused. */
        Outcome whenAbandoned(Outcome refusal) {
            return settled != null && settledDurably ? settled : refusal;
        }
    }

    /**
     * A group commit proposed to a {@link PipelinedLog} and not yet settled: the commands it
     * answers, the reads held behind it, and the undo mark its changes start at.
     */
    private static final class InFlight {
        final PipelinedLog.Commit commit;
        final List<Pending> pending;
        final List<HeldRead> reads;
        /** Settled answers and reads that came after it with no events of their own. */
        final List<Pending> trailing = new ArrayList<>();
        final List<HeldRead> trailingReads = new ArrayList<>();
        final int events;
        final long start;
        final int startMark;
        final long lastSeq;

        InFlight(PipelinedLog.Commit commit, List<Pending> pending, List<HeldRead> reads, int events, long start,
                 int startMark, long lastSeq) {
            this.commit = commit;
            this.pending = pending;
            this.reads = reads;
            this.events = events;
            this.start = start;
            this.startMark = startMark;
            this.lastSeq = lastSeq;
        }
    }

    private final CoordinationState state;
    private final Journal journal;
    private final Clock clock;
    private final ActorSettings settings;
    private final DecisionSite site;
    private final BlockingQueue<Task> queue;
    private final ConcurrentLinkedQueue<ReplicatedTask> replicated = new ConcurrentLinkedQueue<>();
    private final ActorMetrics metrics = new ActorMetrics();
    private final ReadWriteLock admission = new ReentrantReadWriteLock();
    private final Thread thread;
    private final List<Pending> pending = new ArrayList<>();
    /** Proposals of a {@link PipelinedLog} in flight, oldest first (actor thread). */
    private final Deque<InFlight> inFlight = new ArrayDeque<>();
    /** The undo mark where what was decided since the last proposal starts (actor thread). */
    private int openMark;
    private final List<HeldRead> reads = new ArrayList<>();
    private final List<Consumer<Throwable>> failureListeners = new CopyOnWriteArrayList<>();
    /** The batch being processed (actor thread), for refusing what it holds if the actor dies. */
    private final List<Task> batch;
    private volatile boolean closing;
    private volatile Throwable failure;
    private volatile ActorObserver observer = ActorObserver.NONE;
    /** True while an append is running: a death then leaves the batch's fate unknown. */
    private boolean appending;

    /** An actor over a state already rebuilt from {@code journal}; call {@link #start()}. */
    public CoordinationActor(CoordinationState state, Journal journal, Clock clock, ActorSettings settings) {
        this(state, journal, clock, settings, DecisionSite.HERE);
    }

    /** An actor that decides only while {@code site} says so and hands other mutations to it. */
    public CoordinationActor(CoordinationState state, Journal journal, Clock clock, ActorSettings settings,
                             DecisionSite site) {
        this.state = state;
        this.journal = journal;
        this.clock = clock;
        this.settings = settings;
        this.site = site;
        this.queue = new ArrayBlockingQueue<>(settings.queueCapacity());
        this.batch = new ArrayList<>(settings.maxBatch());
        this.thread = new Thread(this::supervisedRun, "synapse-actor");
    }

    /** Starts the actor thread. */
    public void start() {
        thread.start();
    }

    /** Submits a mutation; never blocks. A full queue completes at once with BUSY. */
    public CompletableFuture<Outcome> submit(Mutation mutation) {
        CompletableFuture<Outcome> future = new CompletableFuture<>();
        if (!enqueue(new MutationTask(mutation, future, System.nanoTime()))) {
            future.complete(refusal());
        }
        return future;
    }

    /**
     * Runs a query on the actor thread at its place in the actor's order (after every mutation
     * queued before it) and answers it only once those mutations have committed, so it sees
     * committed state only (linearizable reads) without splitting the batch's group commit; if
     * they fail to commit it is run again without them. The query must return a copy: it is
     * answered after the batch, and read on other threads.
     */
    @SuppressWarnings("unchecked")
    public <T> CompletableFuture<T> read(Function<CoordinationState, T> query) {
        CompletableFuture<Object> future = new CompletableFuture<>();
        if (!enqueue(new ReadTask(query, future, System.nanoTime()))) {
            future.completeExceptionally(new ActorRefusedException(refusal()));
        }
        return (CompletableFuture<T>) future;
    }

    /**
     * Runs {@code work} on the actor thread once everything queued before it has committed, for
     * journal upkeep that must use the writer's own connection and see committed state only:
     * state snapshots, compaction, online backup. Each piece must be short and bounded (a chunk),
     * because the actor decides nothing while it runs. Kept apart from {@link #read} so that
     * moving reads off the writer never moves this. A full queue or a closing actor fails the
     * future with {@link IllegalStateException}; a failure of {@code work} fails it too.
     */
    @SuppressWarnings("unchecked")
    public <T> CompletableFuture<T> upkeep(Function<CoordinationState, T> work) {
        CompletableFuture<Object> future = new CompletableFuture<>();
        if (!enqueue(new UpkeepTask(work, future, System.nanoTime()))) {
            future.completeExceptionally(new ActorRefusedException(refusal()));
        }
        return (CompletableFuture<T>) future;
    }

    /**
     * Runs {@code job} on the actor thread, after the batch in flight and before queued
     * submissions, with the state's changes kept for good: the job applies what was committed
     * elsewhere (a replicated log), so it is never undone and never refused for a full queue.
     * A job that throws has its partial changes undone and fails the future.
     */
    @SuppressWarnings("unchecked")
    public <T> CompletableFuture<T> applyReplicated(Function<CoordinationState, T> job) {
        CompletableFuture<Object> future = new CompletableFuture<>();
        replicated.add(new ReplicatedTask(job, future, System.nanoTime())); // after close() it is failed there
        queue.offer(Wake.INSTANCE); // a full queue means the actor is busy and will look anyway
        return (CompletableFuture<T>) future;
    }

    private boolean enqueue(Task task) {
        admission.readLock().lock();
        try {
            return !closing && failure == null && queue.offer(task);
        } finally {
            admission.readLock().unlock();
        }
    }

    private Outcome.Refused refusal() {
        if (failure != null) {
            return WRITER_FAILED;
        }
        if (closing) {
            return new Outcome.Refused(Outcome.Reason.SHUTTING_DOWN, "The hub is shutting down.");
        }
        metrics.busyRefusals.incrementAndGet();
        return new Outcome.Refused(Outcome.Reason.BUSY, "The hub is busy; retry shortly.");
    }

    /** True when a committed idempotency entry is held under {@code key}; safe from any thread. */
    public boolean remembers(String key) {
        return state.idempotency().findCommitted(key).isPresent();
    }

    /**
     * The committed first answer under {@code key} for a request with {@code requestDigest}
     * (replayed or conflicting), read without queueing: a keyed retry of an applied mutation is
     * answered even when the actor is busy. Safe from any thread.
     */
    public Optional<Outcome> priorAnswer(String key, String requestDigest) {
        return state.idempotency().findCommitted(key).map(e -> MutationDecider.answer(e, requestDigest));
    }

    /** The committed identity pin of {@code name} (contract A2); safe from any thread. */
    public Optional<dev.synapsehub.core.identity.IdentityPin> committedPin(String name) {
        return state.pins().findCommitted(name);
    }

    /** Why the actor stopped for good, if it did; empty while it runs (or after a clean close). */
    public Optional<Throwable> failure() {
        return Optional.ofNullable(failure);
    }

    /**
     * Registers {@code listener} to be told, once, on the dying actor thread, that the actor
     * stopped for good; registered after that, it is told at once. It must not block for long.
     */
    public void onFailure(Consumer<Throwable> listener) {
        failureListeners.add(listener);
        Throwable cause = failure;
        if (cause != null && failureListeners.remove(listener)) {
            notify(listener, cause);
        }
    }

    /** Counters for metrics and benchmarks. */
    public ActorMetrics metrics() {
        return metrics;
    }

    /** Submissions waiting in the queue. */
    public int queueDepth() {
        return queue.size();
    }

    /**
     * How long the oldest submission still waiting has waited, in nanoseconds (0 when none
     * waits): how far behind the writer is. Safe from any thread.
     */
    public long oldestQueuedNanos() {
        Task oldest = queue.peek();
        return oldest == null ? 0 : Math.max(0, System.nanoTime() - oldest.queuedAt());
    }

    /** Sets who is told what commits and decisions cost (one observer; {@link ActorObserver#NONE} by default). */
    public void observe(ActorObserver observer) {
        this.observer = observer == null ? ActorObserver.NONE : observer;
    }

    /**
     * Stops admitting work, lets the actor finish the batch in flight and everything already
     * queued, then closes the journal. Never closes the journal under an append (INV-JA-3).
     */
    @Override
    public void close() throws JournalException {
        admission.writeLock().lock();
        try {
            closing = true;
        } finally {
            admission.writeLock().unlock();
        }
        boolean interrupted = false;
        while (thread.isAlive()) {
            try {
                thread.join();
            } catch (InterruptedException e) {
                interrupted = true; // keep waiting: the append's outcome is authoritative
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        ReplicatedTask late;
        while ((late = replicated.poll()) != null) { // arrived after the loop's last look
            late.future().completeExceptionally(new IllegalStateException("the actor has stopped"));
        }
        journal.close();
    }

    // ---------------------------------------------------------------------------------------
    // The actor thread

    private static final Outcome.Refused WRITER_FAILED = new Outcome.Refused(Outcome.Reason.WRITER_FAILED,
            "The hub's writer failed; nothing more is accepted until the hub restarts.");

    private void supervisedRun() {
        try {
            run();
        } catch (Throwable fatal) {
            die(fatal);
        }
    }

    /**
     * The actor is gone for good: refuse what it held and what is queued, and tell the
     * listeners. The journal is left as it is: the append in flight either committed or not, and
     * a restart reads which.
     */
    private void die(Throwable cause) {
        admission.writeLock().lock();
        try {
            failure = cause;
        } finally {
            admission.writeLock().unlock();
        }
        metrics.writerFailures.incrementAndGet();
        LOG.log(System.Logger.Level.ERROR, "the coordination actor (the hub's only writer) failed"
                + (appending || !inFlight.isEmpty() ? " during a journal append" : "") + "; it refuses everything from now on and the hub"
                + " must restart from the journal", cause);
        Outcome.Refused unknown = appending || !inFlight.isEmpty() ? new Outcome.Refused(Outcome.Reason.WRITER_FAILED,
                "The hub's writer failed while committing this request; it may or may not have been applied. "
                        + "Retry with the same idem_key once the hub is back.") : WRITER_FAILED;
        for (InFlight f : inFlight) {
            for (Pending p : f.pending) {
                p.future.complete(unknown);
            }
            for (Pending p : f.trailing) {
                p.future.complete(p.whenAbandoned(unknown));
            }
            for (HeldRead r : f.reads) {
                r.task.future().completeExceptionally(new ActorRefusedException(WRITER_FAILED));
            }
            for (HeldRead r : f.trailingReads) {
                r.task.future().completeExceptionally(new ActorRefusedException(WRITER_FAILED));
            }
        }
        inFlight.clear();
        for (Pending p : pending) {
            p.future.complete(unknown);
        }
        pending.clear();
        reads.clear(); // their tasks are in the batch, refused next
        for (Task task : batch) {
            refuse(task);
        }
        batch.clear();
        List<Task> queued = new ArrayList<>();
        queue.drainTo(queued);
        for (Task task : queued) {
            refuse(task);
        }
        for (Consumer<Throwable> listener : failureListeners) {
            if (failureListeners.remove(listener)) {
                notify(listener, cause);
            }
        }
    }

    /** Completes a task the dead actor will never run; completing a done future again is a no-op. */
    private static void refuse(Task task) {
        if (task instanceof MutationTask m) {
            m.future().complete(WRITER_FAILED);
        } else if (task instanceof ReadTask r) {
            r.future().completeExceptionally(new ActorRefusedException(WRITER_FAILED));
        } else if (task instanceof UpkeepTask u) {
            u.future().completeExceptionally(new ActorRefusedException(WRITER_FAILED));
        } else if (task instanceof ReplicatedTask r) {
            r.future().completeExceptionally(new ActorRefusedException(WRITER_FAILED));
        }
    }

    private static void notify(Consumer<Throwable> listener, Throwable cause) {
        try {
            listener.accept(cause);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "a writer-failure listener failed", e);
        }
    }

    private void run() {
        while (true) {
            batch.clear();
            settleDone();
            ReplicatedTask rep;
            while (batch.size() < settings.maxBatch() && (rep = replicated.poll()) != null) {
                batch.add(rep); // committed elsewhere: ahead of what is queued here
            }
            if (batch.isEmpty()) {
                Task first;
                try {
                    first = queue.poll(50, TimeUnit.MILLISECONDS);
                } catch (InterruptedException e) {
                    first = null; // only close() ends the loop
                }
                if (first == null) {
                    if (closing && queue.isEmpty() && replicated.isEmpty()) {
                        if (!inFlight.isEmpty()) {
                            settleAll(); // what was proposed is settled and answered before the journal closes
                            continue;
                        }
                        return;
                    }
                    continue;
                }
                batch.add(first);
            }
            queue.drainTo(batch, settings.maxBatch() - batch.size());
            process(batch);
        }
    }

    private void process(List<Task> batch) {
        double now = clock.nowSeconds();
        if (inFlight.isEmpty()) {
            state.beginBatch();
            openMark = 0;
        } // else the open batch holds what is in flight: this one is decided on top of it
        for (Task task : batch) {
            if (task instanceof Wake) {
                continue;
            }
            if (task instanceof ReadTask read) {
                // evaluated here, at its place in the batch; answered only after the batch commits,
                // so a read never splits group commit into several fsyncs
                reads.add(new HeldRead(read).evaluate(state));
                continue;
            }
            if (task instanceof UpkeepTask upkeep) {
                flush(); // upkeep writes through the journal's connection: at a commit boundary
                runOnState(upkeep.work(), upkeep.future());
                continue;
            }
            if (task instanceof ReplicatedTask rep) {
                flush();
                applyReplicated(rep);
                continue;
            }
            MutationTask mutation = (MutationTask) task;
            if (!site.decidesHere()) {
                flush(); // what this actor decided before goes out before what it hands over
                handOver(mutation);
                continue;
            }
            try {
                if (!inFlight.isEmpty() && site.awaitsCommit(mutation.mutation())) {
                    settleAll(); // an earlier attempt of this write is in flight: learn its fate before deciding again
                }
                Outcome before = site.decidedBefore(mutation.mutation());
                if (before != null) {
                    // a decision the log committed: answered once what precedes it commits, and kept if this batch fails
                    pending.add(new Pending(mutation.future(), before, true));
                    continue;
                }
                pending.add(decide(mutation, now));
            } catch (RuntimeException fault) {
                LOG.log(System.Logger.Level.ERROR, "fault deciding " + mutation.mutation().command()
                        + "; undoing its batch", fault);
                abandon(Outcome.Reason.INTERNAL_FAULT, "Internal fault; nothing was applied.");
                mutation.future().complete(new Outcome.Refused(Outcome.Reason.INTERNAL_FAULT,
                        "Internal fault; nothing was applied."));
            }
        }
        if (journal instanceof PipelinedLog log && (log.window() > 1 || !inFlight.isEmpty())) {
            endPipelined(log);
            return;
        }
        flush();
        state.commitBatch();
    }

    // ---------------------------------------------------------------------------------------
    // Pipelined group commits (a PipelinedLog: a replicated hub's leader)

    /**
     * Ends a batch on a pipelined log: proposes what it decided without waiting for the commit,
     * so the next batch is decided on top of it, unless the window is full (then what is in
     * flight is settled first). The open undo batch spans everything in flight; it is committed
     * (and the committed views published) whenever nothing is in flight.
     */
    private void endPipelined(PipelinedLog log) {
        boolean events = false;
        for (Pending p : pending) {
            events |= !p.events.isEmpty();
        }
        if (events && inFlight.size() >= Math.max(1, log.window())) {
            settleAll();
            events = false;
            for (Pending p : pending) {
                events |= !p.events.isEmpty();
            }
        }
        if (events) {
            proposeInFlight(log);
        } else if (!pending.isEmpty() || !reads.isEmpty()) {
            if (inFlight.isEmpty()) {
                flush();
            } else { // answered once what is in flight before them commits
                inFlight.peekLast().trailing.addAll(pending);
                inFlight.peekLast().trailingReads.addAll(reads);
                pending.clear();
                reads.clear();
            }
        }
        if (inFlight.isEmpty()) {
            state.commitBatch();
        }
    }

    private void proposeInFlight(PipelinedLog log) {
        List<CoordinationEvent> all = new ArrayList<>(pending.size() + 8);
        for (Pending p : pending) {
            all.addAll(p.events);
        }
        long start = System.nanoTime();
        PipelinedLog.Commit commit;
        try {
            commit = log.propose(all, decided());
        } catch (JournalException | RuntimeException failure) {
            metrics.journalFailures.incrementAndGet();
            LOG.log(System.Logger.Level.ERROR, "proposing " + all.size() + " events failed; refusing "
                    + pending.size() + " commands", failure);
            if (failure instanceof CommitUnknownException || failure instanceof JournalInDoubtException) {
                abandonUnconfirmed();
            } else {
                abandon(Outcome.Reason.JOURNAL_FAILED, "The journal could not commit; nothing was applied.");
            }
            if (inFlight.isEmpty()) {
                for (HeldRead read : reads) {
                    read.complete();
                }
            } else {
                inFlight.peekLast().trailingReads.addAll(reads);
            }
            reads.clear();
            return;
        }
        inFlight.addLast(new InFlight(commit, new ArrayList<>(pending), new ArrayList<>(reads), all.size(), start,
                openMark, state.lastSeq()));
        metrics.inFlightMax.accumulate(inFlight.size());
        pending.clear();
        reads.clear();
        openMark = state.batchMark();
        commit.done().whenComplete((r, e) -> queue.offer(Wake.INSTANCE)); // a full queue: the actor looks anyway
    }

    /** Settles the proposals in flight whose outcome is known, oldest first, without waiting. */
    private void settleDone() {
        while (!inFlight.isEmpty() && inFlight.peekFirst().commit.done().isDone()) {
            settleHead();
        }
        finishWindow();
    }

    /** Settles every proposal in flight, oldest first, waiting for each. */
    private void settleAll() {
        while (!inFlight.isEmpty()) {
            settleHead();
        }
        finishWindow();
    }

    /** Nothing in flight and nothing decided since: the open batch is committed (views published). */
    private void finishWindow() {
        if (inFlight.isEmpty() && pending.isEmpty() && state.batchOpen()) {
            state.commitBatch();
            state.beginBatch();
            openMark = 0;
        }
    }

    private void settleHead() {
        InFlight f = inFlight.peekFirst();
        List<JournaledEvent> committed;
        try {
            committed = f.commit.settle();
        } catch (CommitUnknownException | JournalInDoubtException unknown) {
            failInFlight(true, unknown);
            return;
        } catch (JournalException | RuntimeException failure) {
            failInFlight(false, failure);
            return;
        }
        inFlight.removeFirst();
        metrics.journalWriting = true;
        recordCommit(System.nanoTime() - f.start, f.pending.size(), f.events);
        long journalSeq = committed.isEmpty() ? f.lastSeq : committed.get(committed.size() - 1).seq();
        if (journalSeq != f.lastSeq) {
            LOG.log(System.Logger.Level.ERROR, "journal numbered a pipelined batch through seq " + journalSeq
                    + " but the state expected " + f.lastSeq + " (mailbox seqs may be off)");
        }
        if (!committed.isEmpty()) {
            observer.published(committed);
        }
        int offset = 0;
        for (Pending p : f.pending) {
            if (p.settled != null) {
                p.future.complete(p.settled);
                continue;
            }
            List<JournaledEvent> mine = committed.subList(offset, offset + p.events.size());
            offset += p.events.size();
            p.future.complete(new Outcome.Decided(p.reply, mine, p.storedResponse));
        }
        for (HeldRead read : f.reads) {
            read.complete();
        }
        for (Pending p : f.trailing) { // no events of their own: a remembered answer, or a reply-only decision
            p.future.complete(p.settled != null ? p.settled
                    : new Outcome.Decided(p.reply, List.of(), p.storedResponse));
        }
        for (HeldRead read : f.trailingReads) {
            read.complete();
        }
    }

    /**
     * The oldest proposal in flight failed: every later one was decided on top of it, so all of
     * them, and what was decided since, are undone and answered alike: as the site says when the
     * outcome is unknown (a replicated hub queues them under their intent ids: they may still
     * commit, together and in order), refused when it certainly did not commit (the log then
     * commits none of the later ones either). Reads held behind them are evaluated again.
     */
    private void failInFlight(boolean unknown, Exception cause) {
        metrics.journalFailures.incrementAndGet();
        metrics.journalWriting = false;
        int batches = inFlight.size();
        int commands = pending.size();
        for (InFlight f : inFlight) {
            commands += f.pending.size();
        }
        LOG.log(System.Logger.Level.ERROR, "a pipelined group commit " + (unknown ? "was not confirmed" : "failed")
                + "; undoing it and the " + (batches - 1) + " proposed on top of it, answering " + commands
                + " commands " + (unknown ? "as unconfirmed" : "refused"), cause);
        InFlight head = inFlight.peekFirst();
        state.rollbackToMark(head.startMark);
        Outcome.Refused refusal = unknown ? UNCONFIRMED
                : new Outcome.Refused(Outcome.Reason.JOURNAL_FAILED, "The journal could not commit; nothing was applied.");
        boolean first = true;
        for (InFlight f : inFlight) {
            if (!first) {
                try {
                    f.commit.abandoned(unknown);
                } catch (RuntimeException fault) {
                    LOG.log(System.Logger.Level.ERROR, "fault giving up a proposal in flight", fault);
                }
            }
            first = false;
            answerFailed(f.pending, unknown, refusal);
            answerFailed(f.trailing, false, refusal);
            for (HeldRead read : f.reads) {
                read.evaluate(state).complete();
            }
            for (HeldRead read : f.trailingReads) {
                read.evaluate(state).complete();
            }
        }
        inFlight.clear();
        answerFailed(pending, unknown, refusal);
        pending.clear();
        for (HeldRead read : reads) {
            read.evaluate(state); // still held: answered with the next commit
        }
        openMark = head.startMark;
        finishWindow();
    }

    private void answerFailed(List<Pending> failed, boolean unknown, Outcome.Refused refusal) {
        for (Pending p : failed) {
            Outcome answer = p.whenAbandoned(refusal);
            if (unknown && p.mutation != null) {
                try {
                    answer = site.unconfirmed(p.mutation, refusal);
                } catch (RuntimeException fault) {
                    LOG.log(System.Logger.Level.ERROR, "fault handing an unconfirmed " + p.mutation.command()
                            + " to the decision site", fault);
                }
            }
            p.future.complete(answer);
        }
    }

    /** Undoes what was decided since the last proposal; ends the batch when nothing is in flight. */
    private void undoOpen() {
        state.rollbackToMark(openMark);
        if (inFlight.isEmpty()) {
            state.commitBatch(); // publishes the views as a rollback would, keeping what committed before
            state.beginBatch();
            openMark = 0;
        }
    }

    private Pending decide(MutationTask task, double now) {
        long start = System.nanoTime();
        MutationDecider.Result result = MutationDecider.decide(state, task.mutation(), now);
        observer.decided(task.mutation().command(), System.nanoTime() - start);
        if (result instanceof MutationDecider.Settled settled) {
            // durable only if the remembered answer was committed before this batch (the committed
            // view is published at each batch end); one decided earlier in this batch fails with it
            Idempotency idem = task.mutation().idempotency();
            boolean durably = idem != null && state.idempotency().findCommitted(idem.key()).isPresent();
            return new Pending(task.future(), settled.outcome(), durably);
        }
        MutationDecider.Fresh fresh = (MutationDecider.Fresh) result;
        for (CoordinationEvent event : fresh.events()) {
            state.apply(event);
        }
        metrics.commands.incrementAndGet();
        return new Pending(task.future(), task.mutation(), fresh.reply(), fresh.events(), fresh.storedResponse());
    }

    private void handOver(MutationTask task) {
        try {
            site.handOver(task.mutation(), task.future());
        } catch (RuntimeException fault) {
            LOG.log(System.Logger.Level.ERROR, "fault handing over " + task.mutation().command(), fault);
            task.future().complete(new Outcome.Refused(Outcome.Reason.INTERNAL_FAULT,
                    "Internal fault; nothing was applied."));
        }
    }

    /** Runs a replicated job with its changes kept; a failing job is undone and reported. */
    private void applyReplicated(ReplicatedTask task) {
        Object result;
        try {
            result = task.job().apply(state);
        } catch (RuntimeException fault) {
            LOG.log(System.Logger.Level.ERROR, "fault applying a replicated change; undoing it", fault);
            state.rollbackBatch();
            state.beginBatch();
            openMark = 0;
            task.future().completeExceptionally(fault);
            return;
        }
        state.commitBatch();
        state.beginBatch();
        openMark = 0;
        task.future().complete(result);
    }

    /**
     * Commits what is pending and completes its futures (on failure undoes and refuses all), then
     * answers the reads held for this batch.
     */
    private void flush() {
        settleAll(); // a commit boundary: what is in flight is settled first, in order
        commitPending();
        for (HeldRead read : reads) {
            read.complete();
        }
        reads.clear();
    }

    private void commitPending() {
        if (pending.isEmpty()) {
            return;
        }
        List<CoordinationEvent> all = new ArrayList<>(pending.size() + 8);
        for (Pending p : pending) {
            all.addAll(p.events);
        }
        List<JournaledEvent> committed = List.of();
        if (!all.isEmpty()) {
            long start = System.nanoTime();
            appending = true;
            try {
                committed = journal instanceof DecisionLog log ? log.append(all, decided()) : journal.append(all);
            } catch (JournalInDoubtException doubt) {
                metrics.journalFailures.incrementAndGet();
                committed = settle(doubt, all); // appending stays true: dying meanwhile leaves the batch in doubt
                if (committed == null) {
                    appending = false;
                    return; // refused or given up; settle answered every command
                }
            } catch (JournalException | RuntimeException failure) {
                appending = false;
                metrics.journalFailures.incrementAndGet();
                metrics.journalWriting = false;
                LOG.log(System.Logger.Level.ERROR, "journal append of " + all.size()
                        + " events failed; refusing " + pending.size() + " commands", failure);
                if (failure instanceof CommitUnknownException) {
                    abandonUnconfirmed();
                } else {
                    abandon(Outcome.Reason.JOURNAL_FAILED, "The journal could not commit; nothing was applied.");
                }
                return;
            }
            appending = false;
            metrics.journalWriting = true;
            recordCommit(System.nanoTime() - start, pending.size(), all.size());
            long journalSeq = committed.get(committed.size() - 1).seq();
            if (journalSeq != state.lastSeq()) {
                LOG.log(System.Logger.Level.ERROR, "journal numbered the batch through seq " + journalSeq
                        + " but the state expected " + state.lastSeq() + "; realigning (mailbox seqs may be off)");
                state.resyncSeq(journalSeq);
            }
        }
        state.commitBatch();
        if (!committed.isEmpty()) {
            observer.published(committed);
        }
        int offset = 0;
        for (Pending p : pending) {
            if (p.settled != null) {
                p.future.complete(p.settled);
                continue;
            }
            List<JournaledEvent> mine = committed.subList(offset, offset + p.events.size());
            offset += p.events.size();
            p.future.complete(new Outcome.Decided(p.reply, mine, p.storedResponse));
        }
        pending.clear();
        state.beginBatch();
        openMark = 0;
    }

    private List<DecidedMutation> decided() {
        List<DecidedMutation> out = new ArrayList<>(pending.size());
        for (Pending p : pending) {
            if (p.settled == null) {
                out.add(new DecidedMutation(p.mutation, p.reply, p.events, p.storedResponse));
            }
        }
        return out;
    }

    /**
     * An append whose outcome is unknown (its fsync failed after the batch was written): no
     * command of the batch is answered, and nothing else is decided, until the journal commits
     * again and says whether the batch is in it. Retried with backoff, so the hub recovers by
     * itself when the fault clears; meanwhile the queue fills and new work is refused busy.
     *
     * @return the batch as committed, or null when it was not (its commands were refused)
     */
    private List<JournaledEvent> settle(JournalInDoubtException doubt, List<CoordinationEvent> batch) {
        metrics.journalWriting = false;
        metrics.journalInDoubt = true;
        LOG.log(System.Logger.Level.ERROR, "journal commit of " + batch.size() + " events is in doubt; holding "
                + pending.size() + " commands unanswered until the journal writes again", doubt);
        long backoffMillis = 20;
        int attemptsWhileClosing = 0;
        while (true) {
            try {
                boolean inJournal = journal.settle(doubt.firstSeq());
                metrics.journalInDoubt = false;
                metrics.journalWriting = true;
                LOG.log(System.Logger.Level.WARNING, "journal writes again; the batch in doubt "
                        + (inJournal ? "was committed and is published" : "was not committed and is refused"));
                if (!inJournal) {
                    abandon(Outcome.Reason.JOURNAL_FAILED, "The journal could not commit; nothing was applied.");
                    return null;
                }
                List<JournaledEvent> committed = new ArrayList<>(batch.size());
                for (int i = 0; i < batch.size(); i++) {
                    committed.add(new JournaledEvent(doubt.firstSeq() + i, batch.get(i)));
                }
                return committed;
            } catch (JournalException | RuntimeException stillFailing) {
                if (closing && ++attemptsWhileClosing > 10) {
                    LOG.log(System.Logger.Level.ERROR, "stopping with a batch in doubt: its commands are told the"
                            + " outcome is unknown", stillFailing);
                    abandon(Outcome.Reason.COMMIT_UNKNOWN, "The journal could not confirm this change; it may"
                            + " or may not have been applied. Retry it with the same idem_key once the hub is back.");
                    return null;
                }
                try {
                    Thread.sleep(backoffMillis);
                } catch (InterruptedException e) {
                    // only close() ends the actor; keep settling
                }
                backoffMillis = Math.min(2_000, backoffMillis * 2);
            }
        }
    }

    /**
     * Undoes the uncommitted batch and refuses every command in it. The reads held so far saw
     * those commands' effects; with all of them refused, the state at each read's place is the
     * state as rolled back, so each read is evaluated again.
     */
    private void abandon(Outcome.Reason reason, String message) {
        undoOpen(); // only what was decided since the last proposal: what is in flight stays
        Outcome.Refused refusal = new Outcome.Refused(reason, message);
        for (Pending p : pending) {
            p.future.complete(p.whenAbandoned(refusal));
        }
        pending.clear();
        for (HeldRead read : reads) {
            read.evaluate(state);
        }
    }

    /**
     * Undoes a batch whose commit is unknown, like {@link #abandon}; each decided command is
     * answered as the site says (a replicated hub queues it), the others with the refusal.
     */
    private void abandonUnconfirmed() {
        Outcome.Refused unknown = UNCONFIRMED;
        undoOpen();
        for (Pending p : pending) {
            Outcome answer = p.whenAbandoned(unknown);
            if (p.mutation != null) {
                try {
                    answer = site.unconfirmed(p.mutation, unknown);
                } catch (RuntimeException fault) {
                    LOG.log(System.Logger.Level.ERROR, "fault handing an unconfirmed " + p.mutation.command()
                            + " to the decision site", fault);
                }
            }
            p.future.complete(answer);
        }
        pending.clear();
        for (HeldRead read : reads) {
            read.evaluate(state);
        }
    }

    private static final Outcome.Refused UNCONFIRMED = new Outcome.Refused(Outcome.Reason.COMMIT_UNKNOWN,
            "The commit could not be confirmed in time; it may still apply. Retry with the same idem_key to learn"
                    + " the outcome.");

    private void recordCommit(long nanos, int commands, int events) {
        observer.committed(nanos, commands, events);
        metrics.batches.incrementAndGet();
        metrics.eventsCommitted.addAndGet(events);
        metrics.commitNanosTotal.addAndGet(nanos);
        metrics.commitNanosMax.accumulate(nanos);
        metrics.lastCommitNanos.set(nanos);
        if (nanos / 1_000_000 > settings.slowCommitMillis()) {
            metrics.slowCommits.incrementAndGet();
            LOG.log(System.Logger.Level.WARNING, "slow journal commit: " + nanos / 1_000_000 + " ms for "
                    + events + " events");
        }
    }

    /** Runs upkeep on the committed state, completing its future with the result or failure. */
    private void runOnState(Function<CoordinationState, ?> work, CompletableFuture<Object> future) {
        try {
            future.complete(work.apply(state));
        } catch (RuntimeException e) {
            future.completeExceptionally(e);
        }
    }

    /** A read evaluated at its place in a batch, answered once everything before it has committed. */
    private static final class HeldRead {
        private final ReadTask task;
        private Object value;
        private RuntimeException failure;

        HeldRead(ReadTask task) {
            this.task = task;
        }

        HeldRead evaluate(CoordinationState state) {
            try {
                value = task.query().apply(state);
                failure = null;
            } catch (RuntimeException e) {
                value = null;
                failure = e;
            }
            return this;
        }

        void complete() {
            if (failure != null) {
                task.future().completeExceptionally(failure);
            } else {
                task.future().complete(value);
            }
        }
    }
}
