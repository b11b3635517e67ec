package dev.synapsehub.core.actor;

import dev.synapsehub.core.Clock;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.journal.CommitUnknownException;
import dev.synapsehub.core.journal.Journal;
import dev.synapsehub.core.journal.JournalException;
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
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
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
 * <p>In a replicated hub two more things happen on this thread: a {@link DecisionSite} that does
 * not decide here hands each mutation over instead of deciding it, and
 * {@link #applyReplicated} runs changes that were committed elsewhere (applied for good, never
 * undone), ahead of queued submissions and never refused for a full queue.
 */
public final class CoordinationActor implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(CoordinationActor.class.getName());

    private sealed interface Task permits MutationTask, ReadTask, ReplicatedTask, Wake {
    }

    private record ReplicatedTask(Function<CoordinationState, ?> job, CompletableFuture<Object> future)
            implements Task {
    }

    /** Wakes the actor when a replicated task arrives while it waits on the queue. */
    private enum Wake implements Task {
        INSTANCE
    }

    private record MutationTask(Mutation mutation, CompletableFuture<Outcome> future) implements Task {
    }

    private record ReadTask(Function<CoordinationState, ?> query, CompletableFuture<Object> future)
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

        Pending(CompletableFuture<Outcome> future, Mutation mutation, Reply reply, List<CoordinationEvent> events,
                String stored) {
            this.future = future;
            this.mutation = mutation;
            this.reply = reply;
            this.events = events;
            this.storedResponse = stored;
            this.settled = null;
        }

        Pending(CompletableFuture<Outcome> future, Outcome settled) {
            this.future = future;
            this.mutation = null;
            this.reply = null;
            this.events = List.of();
            this.storedResponse = null;
            this.settled = settled;
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
    private volatile boolean closing;

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
        this.thread = new Thread(this::run, "synapse-actor");
    }

    /** Starts the actor thread. */
    public void start() {
        thread.start();
    }

    /** Submits a mutation; never blocks. A full queue completes at once with BUSY. */
    public CompletableFuture<Outcome> submit(Mutation mutation) {
        CompletableFuture<Outcome> future = new CompletableFuture<>();
        if (!enqueue(new MutationTask(mutation, future))) {
            future.complete(refusal());
        }
        return future;
    }

    /**
     * Runs a query on the actor thread after every mutation queued before it has committed,
     * so it sees committed state only (linearizable reads).
     */
    @SuppressWarnings("unchecked")
    public <T> CompletableFuture<T> read(Function<CoordinationState, T> query) {
        CompletableFuture<Object> future = new CompletableFuture<>();
        if (!enqueue(new ReadTask(query, future))) {
            Outcome.Refused refused = refusal();
            future.completeExceptionally(new IllegalStateException(refused.message()));
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
        replicated.add(new ReplicatedTask(job, future)); // after close() it is failed there
        queue.offer(Wake.INSTANCE); // a full queue means the actor is busy and will look anyway
        return (CompletableFuture<T>) future;
    }

    private boolean enqueue(Task task) {
        admission.readLock().lock();
        try {
            return !closing && queue.offer(task);
        } finally {
            admission.readLock().unlock();
        }
    }

    private Outcome.Refused refusal() {
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

    /** Counters for metrics and benchmarks. */
    public ActorMetrics metrics() {
        return metrics;
    }

    /** Submissions waiting in the queue. */
    public int queueDepth() {
        return queue.size();
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

    private void run() {
        List<Task> batch = new ArrayList<>(settings.maxBatch());
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
                flush();
                answer(read);
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
        MutationDecider.Result result = MutationDecider.decide(state, task.mutation(), now);
        if (result instanceof MutationDecider.Settled settled) {
            return new Pending(task.future(), settled.outcome());
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

    /** Commits what is pending, then completes its futures; on failure undoes and refuses all. */
    private void flush() {
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
            try {
                committed = journal instanceof DecisionLog log ? log.append(all, decided()) : journal.append(all);
            } catch (JournalException | RuntimeException failure) {
                metrics.journalFailures.incrementAndGet();
                LOG.log(System.Logger.Level.ERROR, "journal append of " + all.size()
                        + " events failed; refusing " + pending.size() + " commands", failure);
                if (failure instanceof CommitUnknownException) {
                    abandon(Outcome.Reason.COMMIT_UNKNOWN, "The commit could not be confirmed in time; it may still"
                            + " apply. Retry with the same idem_key to learn the outcome.");
                } else {
                    abandon(Outcome.Reason.JOURNAL_FAILED, "The journal could not commit; nothing was applied.");
                }
                return;
            }
            recordCommit(System.nanoTime() - start, all.size());
            long journalSeq = committed.get(committed.size() - 1).seq();
            if (journalSeq != state.lastSeq()) {
                LOG.log(System.Logger.Level.ERROR, "journal numbered the batch through seq " + journalSeq
                        + " but the state expected " + state.lastSeq() + "; realigning (mailbox seqs may be off)");
                state.resyncSeq(journalSeq);
            }
        }
        state.commitBatch();
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

    /** Undoes the uncommitted batch and refuses every command in it. */
    private void abandon(Outcome.Reason reason, String message) {
        state.rollbackBatch();
        for (Pending p : pending) {
            p.future.complete(new Outcome.Refused(reason, message));
        }
        pending.clear();
        state.beginBatch();
    }

    private void recordCommit(long nanos, int events) {
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

    private void answer(ReadTask read) {
        try {
            read.future().complete(read.query().apply(state));
        } catch (RuntimeException e) {
            read.future().completeExceptionally(e);
        }
    }
}
