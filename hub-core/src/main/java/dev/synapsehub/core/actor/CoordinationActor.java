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

import java.util.ArrayList;
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

        /** True unless this is an answer committed before the batch (a fact whatever this actor's role now). */
        boolean needsConfirming() {
            return settled == null || !settledDurably;
        }

        /** The answer when the batch fails: a durable earlier answer stands, anything else is refused. */
        Outcome whenAbandoned(Outcome refusal) {
            return settled != null && settledDurably ? settled : refusal;
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

    /** The committed two-person relay approvals awaiting a second operator; safe from any thread. */
    public java.util.List<dev.synapsehub.core.state.RelayApprovals.Pending> pendingRelayApprovals() {
        return dev.synapsehub.core.state.RelayApprovals.pending(state.idempotency());
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

    /** The namespaces partitioned by committed federation records (replicated governance); safe from any thread. */
    public java.util.Set<String> committedPartitions() {
        return state.governance().committedPartitions();
    }

    /** The peers quarantined by committed federation records (replicated governance); safe from any thread. */
    public java.util.Set<String> committedQuarantines() {
        return state.governance().committedQuarantines();
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
                + (appending ? " during a journal append" : "") + "; it refuses everything from now on and the hub"
                + " must restart from the journal", cause);
        Outcome.Refused unknown = appending ? new Outcome.Refused(Outcome.Reason.WRITER_FAILED,
                "The hub's writer failed while committing this request; it may or may not have been applied. "
                        + "Retry with the same idem_key once the hub is back.") : WRITER_FAILED;
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
        state.beginBatch();
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
        flush();
        state.commitBatch();
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
            task.future().completeExceptionally(fault);
            return;
        }
        state.commitBatch();
        state.beginBatch();
        task.future().complete(result);
    }

    /**
     * Commits what is pending and completes its futures (on failure undoes and refuses all), then
     * answers the reads held for this batch.
     */
    private void flush() {
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
        // nothing committed vouches for decisions without events: a replica confirms it still decides first
        boolean unconfirmed = all.isEmpty() && needsConfirming() && !stillDecides();
        state.commitBatch();
        if (!committed.isEmpty()) {
            observer.published(committed);
        }
        int offset = 0;
        for (Pending p : pending) {
            if (unconfirmed && p.needsConfirming()) {
                p.future.complete(unconfirmedAnswer(p.mutation));
                continue;
            }
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
    }

    /** True when a pending answer was decided on this batch's state (not one committed before it). */
    private boolean needsConfirming() {
        for (Pending p : pending) {
            if (p.needsConfirming()) {
                return true;
            }
        }
        return false;
    }

    private boolean stillDecides() {
        try {
            return site.stillDecides();
        } catch (RuntimeException fault) {
            LOG.log(System.Logger.Level.ERROR, "fault confirming that this actor still decides; refusing the batch's"
                    + " decisions without events", fault);
            return false;
        }
    }

    private Outcome unconfirmedAnswer(Mutation mutation) {
        try {
            return site.notConfirmed(mutation);
        } catch (RuntimeException fault) {
            LOG.log(System.Logger.Level.ERROR, "fault answering an unconfirmed decision", fault);
            return new Outcome.Refused(Outcome.Reason.BUSY, "This node could not confirm it still decides; nothing"
                    + " was applied. Retry.");
        }
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
                    // the state is rolled back while the batch may be in the journal: deciding and
                    // appending anything more would journal decisions a replay contradicts
                    throw new GaveUpInDoubt(stillFailing);
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

    /** The actor stopped for good with a batch in doubt: {@link #die} refuses the rest. */
    private static final class GaveUpInDoubt extends RuntimeException {
        GaveUpInDoubt(Throwable cause) {
            super("stopped while a journal batch was in doubt; the next start reads whether it committed", cause);
        }
    }

    /**
     * Undoes the uncommitted batch and refuses every command in it. The reads held so far saw
     * those commands' effects; with all of them refused, the state at each read's place is the
     * state as rolled back, so each read is evaluated again.
     */
    private void abandon(Outcome.Reason reason, String message) {
        state.rollbackBatch();
        Outcome.Refused refusal = new Outcome.Refused(reason, message);
        for (Pending p : pending) {
            p.future.complete(p.whenAbandoned(refusal));
        }
        pending.clear();
        state.beginBatch();
        for (HeldRead read : reads) {
            read.evaluate(state);
        }
    }

    /**
     * Undoes a batch whose commit is unknown, like {@link #abandon}; each decided command is
     * answered as the site says (a replicated hub queues it), the others with the refusal.
     */
    private void abandonUnconfirmed() {
        Outcome.Refused unknown = new Outcome.Refused(Outcome.Reason.COMMIT_UNKNOWN, "The commit could not be"
                + " confirmed in time; it may still apply. Retry with the same idem_key to learn the outcome.");
        state.rollbackBatch();
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
        state.beginBatch();
        for (HeldRead read : reads) {
            read.evaluate(state);
        }
    }

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
