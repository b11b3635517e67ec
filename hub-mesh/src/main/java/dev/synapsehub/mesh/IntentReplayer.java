package dev.synapsehub.mesh;

import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.Outcome;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Replays a node's queued intents (seed 001 §9, §11 step 4). A pass starts only while the node
 * knows its membership and a leader and its state holds every record accepted so far; it takes
 * the queued intents in the canonical order and submits them one at a time (the next only once
 * the previous is reconciled, so the order holds), each re-decided by the leader on the current
 * state. Each result ({@link Reconciliation}) is stored durably and then reported to the agent
 * that made the intent; an intent that could not be decided (no quorum again) stays queued with
 * its retry counters advanced, and the pass stops there.
 */
final class IntentReplayer {
    private static final System.Logger LOG = System.getLogger(IntentReplayer.class.getName());
    private static final long TICK_MILLIS = 200;

    /** What the replayer needs from its node. */
    interface Node {
        /** True once membership and a leader are known and the state is caught up (§11 step 4). */
        boolean readyToReplay();

        /** Submits the replay of {@code intent} (never queued again), on the node's actor. */
        CompletableFuture<Outcome> submit(QueuedIntent intent, Mutation mutation);

        /** Hub time now, Unix seconds. */
        double now();

        /** Tells the agent (and, for a decision, this node's connections) what became of {@code intent}. */
        void report(QueuedIntent intent, Mutation mutation, Outcome outcome);
    }

    private final IntentQueue queue;
    private final Node node;
    private final ScheduledExecutorService scheduler;
    private final AtomicBoolean running = new AtomicBoolean();
    private final AtomicLong reconciled = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();

    IntentReplayer(IntentQueue queue, Node node, ScheduledExecutorService scheduler) {
        this.queue = queue;
        this.node = node;
        this.scheduler = scheduler;
    }

    /** Starts looking for work every {@value #TICK_MILLIS} ms. */
    void start() {
        scheduler.scheduleWithFixedDelay(this::tick, TICK_MILLIS, TICK_MILLIS, TimeUnit.MILLISECONDS);
    }

    /** Intents reconciled since start. */
    long reconciled() {
        return reconciled.get();
    }

    /** Replay steps that failed (stored outcome could not be written, or an unexpected fault) since start. */
    long failures() {
        return failures.get();
    }

    /** One look for work (scheduled; package-private so tests can drive it). */
    void tick() {
        try {
            if (queue.depth() == 0 || !node.readyToReplay() || !running.compareAndSet(false, true)) {
                return;
            }
            next(queue.queued(), 0);
        } catch (RuntimeException e) {
            running.set(false);
            failures.incrementAndGet();
            LOG.log(System.Logger.Level.ERROR, "intent replay pass failed", LogRedactor.safe(e));
        }
    }

    private void next(List<QueuedIntent> pass, int i) {
        if (i >= pass.size()) {
            running.set(false);
            return;
        }
        QueuedIntent intent = pass.get(i);
        double now = node.now();
        if (intent.nextAttemptAt() > now) {
            running.set(false); // not due yet; nothing after it goes first
            return;
        }
        Mutation mutation;
        try {
            mutation = queue.mutation(intent);
        } catch (RuntimeException e) {
            // an entry this node can no longer read is not silently dropped: it stays, and is logged
            running.set(false);
            failures.incrementAndGet();
            LOG.log(System.Logger.Level.ERROR, "queued " + LogRedactor.describe(intent) + " cannot be rebuilt: "
                    + LogRedactor.scrub(e.getMessage()));
            return;
        }
        node.submit(intent, mutation).whenCompleteAsync((outcome, fault) -> {
            try {
                if (fault != null || !settle(intent, mutation, outcome)) {
                    running.set(false);
                    return;
                }
                next(pass, i + 1);
            } catch (RuntimeException e) {
                running.set(false);
                failures.incrementAndGet();
                LOG.log(System.Logger.Level.ERROR, "replaying " + LogRedactor.describe(intent) + " failed",
                        LogRedactor.safe(e));
            }
        }, scheduler);
    }

    /** Stores and reports the result of one replay; false when the intent stays queued. */
    private boolean settle(QueuedIntent intent, Mutation mutation, Outcome outcome) {
        double now = node.now();
        Reconciliation.Result result = Reconciliation.of(outcome);
        try {
            if (result == null) {
                double backoff = Math.min(30, 0.5 * Math.pow(2, Math.min(intent.attempts(), 10)));
                queue.update(intent.retried(now, now + backoff));
                return false;
            }
            QueuedIntent done = intent.reconciled(result.outcome(), result.detail(), now);
            queue.update(done); // journaled before it is reported
            reconciled.incrementAndGet();
            LOG.log(System.Logger.Level.INFO, LogRedactor.describe(intent) + ": " + result.outcome().wire());
            node.report(done, mutation, outcome);
            return true;
        } catch (IOException e) {
            failures.incrementAndGet();
            LOG.log(System.Logger.Level.ERROR, "cannot store the replay of intent " + intent.intentId() + ": "
                    + LogRedactor.scrub(e.getMessage()));
            return false;
        }
    }
}
