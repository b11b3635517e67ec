package dev.synapsehub.mesh;

import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.command.BoardCommand;
import dev.synapsehub.core.command.ChannelCommand;
import dev.synapsehub.core.command.CheckpointCommand;
import dev.synapsehub.core.command.ClaimCommand;
import dev.synapsehub.core.command.ClaimFamilyCommand;
import dev.synapsehub.core.command.Command;
import dev.synapsehub.core.command.HandoffCommand;
import dev.synapsehub.core.command.LedgerTaskCommand;
import dev.synapsehub.core.command.LedgerTaskUpdateCommand;
import dev.synapsehub.core.command.ReleaseCommand;
import dev.synapsehub.core.command.ResourceOfferCommand;
import dev.synapsehub.core.command.TaskUpdateCommand;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * A node's offline queue (seed 001 §9) over its {@link IntentStore}: the strong writes it took
 * while no quorum could commit them, in the canonical replay order, and the last reconciled
 * ones (kept for inspection, at most {@link #KEPT_RECONCILED}). Every change is saved before it
 * is reported, so what an agent was told is queued survives a crash. Thread-safe.
 */
final class IntentQueue {
    /** Reconciled entries kept in the file after their outcome, newest last. */
    static final int KEPT_RECONCILED = 256;

    private final IntentStore store;
    private final String nodeId;
    private final MutationCodec mutations;
    private final Map<String, QueuedIntent> entries = new LinkedHashMap<>();
    private long lastOriginSeq;

    private IntentQueue(IntentStore store, String nodeId, MutationCodec mutations) {
        this.store = store;
        this.nodeId = nodeId;
        this.mutations = mutations;
    }

    /**
     * Loads the queue (seed 001 §11 step 1). An intent that was being replayed when the node
     * stopped is still {@code queued} on disk: it is a recovery candidate like the others (§11
     * step 3), since only a reconciled outcome ends an intent.
     */
    static IntentQueue open(IntentStore store, String nodeId, MutationCodec mutations) throws IOException {
        IntentQueue q = new IntentQueue(store, nodeId, mutations);
        IntentStore.Contents contents = store.load();
        for (QueuedIntent i : contents.intents()) {
            q.entries.put(i.intentId(), i);
            if (i.originNodeId().equals(nodeId)) {
                q.lastOriginSeq = Math.max(q.lastOriginSeq, i.originSeq());
            }
        }
        q.lastOriginSeq = Math.max(q.lastOriginSeq, contents.lastOriginSeq()); // §11 step 2
        return q;
    }

    /**
     * True for the strong writes that are queued when no quorum commits them (§4, §5). Identity
     * pins and reclaims are strong but not queued: a pin follows a registration the edge already
     * admitted, and a reclaim's online checks would be stale by the time it replays.
     */
    static boolean queueable(Command command) {
        return command instanceof ClaimFamilyCommand || command instanceof LedgerTaskCommand
                || command instanceof LedgerTaskUpdateCommand || command instanceof ResourceOfferCommand
                || command instanceof ChannelCommand;
    }

    /**
     * Queues {@code mutation} durably and returns its entry.
     *
     * @param term the Raft term this node knows now (the intent's lease epoch)
     * @param leader the leader it last knew (itself when it knew none)
     * @param baseIndex the last record its state holds
     * @throws IOException when it could not be stored: the caller must not say it is queued
     */
    synchronized QueuedIntent enqueue(Mutation mutation, long term, String leader, long baseIndex, double now)
            throws IOException {
        return enqueue(mutation, null, term, leader, baseIndex, now);
    }

    /**
     * Queues {@code mutation} durably under {@code intentId} (the id its forwards or its record
     * carried, so a replay of a write that committed after all is recognised; null: a fresh one).
     */
    synchronized QueuedIntent enqueue(Mutation mutation, String intentId, long term, String leader, long baseIndex,
                                      double now) throws IOException {
        return enqueue(mutation, intentId, term, leader, baseIndex, -1, now);
    }

    /**
     * Queues {@code mutation} durably under {@code intentId}, taken when this node had applied
     * {@code handOverBase} (-1: not known).
     */
    synchronized QueuedIntent enqueue(Mutation mutation, String intentId, long term, String leader, long baseIndex,
                                      long handOverBase, double now) throws IOException {
        Command c = mutation.command();
        long seq = lastOriginSeq + 1;
        String id = intentId == null || entries.containsKey(intentId) ? UUID.randomUUID().toString() : intentId;
        QueuedIntent intent = new QueuedIntent(id, entityType(c), entityId(c),
                WriteClass.STRONG, nodeId, seq, term, new FenceToken(term, leader, baseIndex).wire(), now, 0, now, now,
                now, EnvelopeState.QUEUED, null, null, null, c.agent(), mutations.write(mutation), handOverBase);
        entries.put(intent.intentId(), intent);
        try {
            save(seq);
        } catch (IOException e) {
            entries.remove(intent.intentId());
            throw e;
        }
        lastOriginSeq = seq;
        return intent;
    }

    /** The entries waiting for replay, in the canonical order. */
    synchronized List<QueuedIntent> queued() {
        List<QueuedIntent> out = new ArrayList<>();
        for (QueuedIntent i : entries.values()) {
            if (i.queued()) {
                out.add(i);
            }
        }
        out.sort(QueuedIntent.CANONICAL);
        return out;
    }

    /**
     * The lowest hand-over base among the queued entries ({@code 0} for one not known), or
     * {@code Long.MAX_VALUE} when none: a part of this node's hold ({@link DecidedIntents}).
     */
    synchronized long lowestHandOverBase() {
        long lowest = Long.MAX_VALUE;
        for (QueuedIntent i : entries.values()) {
            if (i.queued()) {
                lowest = Math.min(lowest, Math.max(0, i.handOverBase()));
            }
        }
        return lowest;
    }

    /** Every entry, queued and recently reconciled. */
    synchronized List<QueuedIntent> all() {
        return new ArrayList<>(entries.values());
    }

    /** The entry with {@code intentId}, or null. */
    synchronized QueuedIntent get(String intentId) {
        return entries.get(intentId);
    }

    /** How many intents wait for replay. */
    synchronized int depth() {
        int n = 0;
        for (QueuedIntent i : entries.values()) {
            if (i.queued()) {
                n++;
            }
        }
        return n;
    }

    /** Stores a new state of an entry (a retry or its reconciliation) durably. */
    synchronized void update(QueuedIntent intent) throws IOException {
        QueuedIntent before = entries.put(intent.intentId(), intent);
        if (!intent.queued()) {
            entries.remove(intent.intentId()); // reconciled ones go to the end, and the oldest are dropped
            entries.put(intent.intentId(), intent);
            prune();
        }
        try {
            save(lastOriginSeq);
        } catch (IOException e) {
            if (before == null) {
                entries.remove(intent.intentId());
            } else {
                entries.put(intent.intentId(), before);
            }
            throw e;
        }
    }

    /** The mutation of {@code intent}, rebuilt for this node's edge. */
    Mutation mutation(QueuedIntent intent) {
        return mutations.read(intent.mutation());
    }

    private void prune() {
        int reconciled = 0;
        for (QueuedIntent i : entries.values()) {
            reconciled += i.queued() ? 0 : 1;
        }
        var it = entries.values().iterator();
        while (reconciled > KEPT_RECONCILED && it.hasNext()) {
            if (!it.next().queued()) {
                it.remove();
                reconciled--;
            }
        }
    }

    private void save(long seq) throws IOException {
        store.save(new ArrayList<>(entries.values()), seq);
    }

    static String entityType(Command c) {
        if (c instanceof ClaimCommand) {
            return "claim";
        } else if (c instanceof ReleaseCommand) {
            return "release";
        } else if (c instanceof HandoffCommand) {
            return "handoff";
        } else if (c instanceof TaskUpdateCommand) {
            return "task_update";
        } else if (c instanceof CheckpointCommand) {
            return "checkpoint";
        } else if (c instanceof LedgerTaskCommand) {
            return "board_task";
        } else if (c instanceof LedgerTaskUpdateCommand) {
            return "board_task_update";
        } else if (c instanceof ResourceOfferCommand) {
            return "resource_offer";
        } else if (c instanceof BoardCommand) {
            return "board";
        } else if (c instanceof ChannelCommand ch) {
            return "channel_" + ch.op().name().toLowerCase(java.util.Locale.ROOT); // channel_join, ...
        }
        return c.getClass().getSimpleName();
    }

    static String entityId(Command c) {
        if (c instanceof ClaimFamilyCommand f) {
            return String.valueOf(f.taskId());
        } else if (c instanceof LedgerTaskCommand t) {
            return String.valueOf(t.taskId());
        } else if (c instanceof LedgerTaskUpdateCommand t) {
            return String.valueOf(t.taskId());
        } else if (c instanceof ResourceOfferCommand r) {
            return r.kind() + "/" + r.name();
        } else if (c instanceof ChannelCommand ch) {
            return ch.channel();
        }
        return "";
    }
}
