package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.Outcome;
import dev.synapsehub.core.reply.Reply;

import java.io.IOException;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * A mesh node's offline queue at work (seed 001 §7 step 4, §9–§11): a strong write that no
 * quorum committed in time becomes a durable {@link QueuedIntent} and its agent is answered
 * {@code queued} (it grants nothing); once a leader is back, the {@link IntentReplayer} replays
 * the queue in the canonical order and each result is stored, published and reported.
 */
final class MeshIntents {
    private static final System.Logger LOG = System.getLogger(MeshIntents.class.getName());

    /** What the queue needs to know about its node. */
    interface View {
        /** The current Raft term (the lease epoch an intent records). */
        long term();

        /** The leader this node last knew (itself when none). */
        String leader();

        /** The log index of the last record this node's state holds. */
        long baseIndex();

        /** True once membership and a leader are known and this node's state is caught up. */
        boolean readyToReplay();
    }

    private final String nodeId;
    private final IntentQueue queue;
    private final View view;
    private final Supplier<CoordinationActor> actor;
    private final EdgeBinding edge;
    private final Clock clock;
    private final String timeout;
    private final IntentReplayer replayer;
    private final Map<Mutation, Boolean> replaying = Collections.synchronizedMap(new IdentityHashMap<>());
    private final IntentTags tags;
    private final AtomicLong queuedTotal = new AtomicLong();
    private final AtomicLong queueFailures = new AtomicLong();

    MeshIntents(String nodeId, IntentQueue queue, View view, Supplier<CoordinationActor> actor, EdgeBinding edge,
                Clock clock, ScheduledExecutorService scheduler, String timeout, IntentTags tags) {
        this.nodeId = nodeId;
        this.tags = tags;
        this.queue = queue;
        this.view = view;
        this.actor = actor;
        this.edge = edge;
        this.clock = clock;
        this.timeout = timeout;
        this.replayer = new IntentReplayer(queue, new Replaying(), scheduler);
    }

    /** Starts the replay loop; it waits for a leader by itself (§11 step 4). */
    void start() {
        replayer.start();
    }

    /**
     * What becomes of a write no quorum committed in time: a queued strong write, answered
     * {@link Outcome.Reason#QUEUED}; anything else (not a strong write, a replay, a queue that
     * cannot be written) keeps {@code refusal}.
     */
    Outcome queueInstead(Mutation mutation, Outcome.Refused refusal) {
        if (!IntentQueue.queueable(mutation.command()) || replaying.containsKey(mutation)) {
            return refusal;
        }
        QueuedIntent intent;
        try {
            IntentTags.Tag tag = tags.of(mutation);
            // under the id and hand-over base it was handed to the mesh with: its record, if any, commits after it
            // (without a tag no record names its fresh id: today's base is as good as any)
            long base = Math.max(0, view.baseIndex());
            intent = queue.enqueue(mutation, tag == null ? null : tag.intentId(), Math.max(0, view.term()),
                    view.leader(), base, tag == null ? base : tag.base(), clock.nowSeconds());
        } catch (IOException | RuntimeException e) {
            queueFailures.incrementAndGet();
            LOG.log(System.Logger.Level.ERROR, "cannot queue " + LogRedactor.describe(mutation) + " durably; answering "
                    + refusal.reason() + ": " + LogRedactor.scrub(e));
            return refusal;
        }
        queuedTotal.incrementAndGet();
        LOG.log(System.Logger.Level.WARNING, "no quorum committed " + LogRedactor.describe(mutation) + " within "
                + timeout + "; queued as " + LogRedactor.describe(intent));
        return new Outcome.Refused(Outcome.Reason.QUEUED, "No quorum could commit this within " + timeout
                + "; it is queued as intent " + intent.intentId() + " and grants nothing until a replay commits it."
                + " Its outcome comes as an intent_reconciled frame.");
    }

    /** The counters, measured now. */
    IntentCounters counters() {
        return new IntentCounters(depth(), queuedTotal(), reconciledTotal(), failures());
    }

    /** The queue. */
    IntentQueue queue() {
        return queue;
    }

    /** Intents waiting for replay. */
    int depth() {
        return queue.depth();
    }

    /** Writes queued since start. */
    long queuedTotal() {
        return queuedTotal.get();
    }

    /** Intents reconciled since start. */
    long reconciledTotal() {
        return replayer.reconciled();
    }

    /** Writes that could not be queued, replay steps and reports that failed, since start. */
    long failures() {
        return queueFailures.get() + replayer.failures();
    }

    /** The replayer's view of the node. */
    private final class Replaying implements IntentReplayer.Node {
        @Override
        public boolean readyToReplay() {
            return view.readyToReplay();
        }

        @Override
        public CompletableFuture<Outcome> submit(QueuedIntent intent, Mutation mutation) {
            replaying.put(mutation, Boolean.TRUE);
            // the replay carries the intent's id: a leader that holds it committed answers noop_already_applied
            IntentTags.Tag tag = tags.tag(mutation, IntentTags.Tag.own(intent.intentId(), true, false,
                    intent.handOverBase()));
            return actor.get().submit(mutation).whenComplete((o, t) -> {
                replaying.remove(mutation);
                tags.untag(mutation, tag);
            });
        }

        @Override
        public double now() {
            return clock.nowSeconds();
        }

        @Override
        public void report(QueuedIntent intent, Mutation mutation, Outcome outcome) {
            if (outcome instanceof Outcome.Decided d && d.reply().granted()) {
                // this node took the request, so no other path publishes it to this node's connections
                try {
                    edge.publishRemote(new RemoteDecision(nodeId, mutation.context(), d.reply(), d.storedResponse(),
                            d.committed()));
                } catch (RuntimeException e) {
                    queueFailures.incrementAndGet();
                    LOG.log(System.Logger.Level.ERROR, "cannot publish the replay of intent " + intent.intentId(),
                            LogRedactor.safe(e));
                }
            }
            ObjectNode report = MeshJson.MAPPER.createObjectNode();
            report.put("intent_id", intent.intentId());
            report.put("outcome", intent.outcome().wire());
            report.put("entity_type", intent.entityType());
            report.put("task_id", intent.entityId());
            if (intent.detail() != null) {
                report.put("detail", intent.detail());
            }
            if (outcome instanceof Outcome.Decided d && d.reply() instanceof Reply.Denied denied) {
                report.put("reason_code", denied.refusal().name());
            }
            try {
                edge.reportIntent(intent.agent(), report);
            } catch (RuntimeException e) {
                queueFailures.incrementAndGet();
                LOG.log(System.Logger.Level.ERROR, "cannot report intent " + intent.intentId() + " to "
                        + intent.agent(), LogRedactor.safe(e));
            }
        }
    }
}
