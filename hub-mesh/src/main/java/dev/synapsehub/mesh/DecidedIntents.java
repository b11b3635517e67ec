package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.JsonNode;
import dev.synapsehub.core.actor.Outcome;
import dev.synapsehub.core.journal.JournaledEvent;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The decisions of the most recent committed records that carry an intent id, by id: what a
 * leader answers a write whose intent has committed already instead of deciding it again
 * (exactly-once forwarding and replay across a leader change, seed 001 §7–§10). Every node
 * fills it from the records it applies, in log order, so a new leader holds the same entries
 * as the old one once it has applied every record before its term. Bounded: the oldest id is
 * forgotten first beyond {@link #CAPACITY}. Touched on the actor thread only.
 */
final class DecidedIntents {
    /** Ids remembered: far more than the writes a node retries or queues within a commit timeout. */
    static final int CAPACITY = 8192;

    /** A committed decision, as it was answered. */
    record Decided(JsonNode reply, String storedResponse, List<JournaledEvent> committed) {
        Decided {
            committed = List.copyOf(committed);
        }
    }

    private final ReplyCodec replies = new ReplyCodec();
    private final int capacity;
    private final LinkedHashMap<String, Decided> decided = new LinkedHashMap<>();

    DecidedIntents() {
        this(CAPACITY);
    }

    DecidedIntents(int capacity) {
        this.capacity = Math.max(1, capacity);
    }

    /** Remembers the decisions of a committed record that carry an intent id. */
    void record(ReplicatedBatch batch) {
        for (int i = 0; i < batch.decisions().size(); i++) {
            ReplicatedBatch.Decision d = batch.decisions().get(i);
            if (d.intentId() != null) {
                remember(d.intentId(), new Decided(d.reply(), d.storedResponse(), batch.committedOf(i)));
            }
        }
    }

    /** Remembers one decision (a record's, or one restored from a snapshot, oldest first). */
    void remember(String intentId, Decided d) {
        decided.remove(intentId);
        decided.put(intentId, d);
        while (decided.size() > capacity) {
            decided.remove(decided.keySet().iterator().next());
        }
    }

    /** The committed decision of {@code intentId}, or null. */
    Decided get(String intentId) {
        return decided.get(intentId);
    }

    /** The outcome a retry of {@code intentId} is answered with: the first decision; null when none. */
    Outcome.Decided outcome(String intentId) {
        Decided d = decided.get(intentId);
        return d == null ? null : new Outcome.Decided(replies.read(d.reply()), d.committed(), d.storedResponse());
    }

    /** The remembered decisions, oldest first (a snapshot carries them). */
    Map<String, Decided> view() {
        return new LinkedHashMap<>(decided);
    }

    /** Forgets everything (a snapshot replaces the state). */
    void clear() {
        decided.clear();
    }

    /** How many are remembered. */
    int size() {
        return decided.size();
    }

    /** The ids remembered, oldest first. */
    List<String> ids() {
        return new ArrayList<>(decided.keySet());
    }
}
