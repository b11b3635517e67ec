package dev.synapsehub.mesh;

import dev.synapsehub.core.actor.Mutation;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.UUID;

/**
 * The intent id each strong write carries while a node hands it to the mesh: assigned once by
 * the node that took it (when it forwards it, or proposes it as leader), kept by every retry of
 * the forward, by the queue entry it may become and by that entry's replays, and written into
 * the decision of the record that commits it. The leader answers a write whose intent id has
 * committed already with that first decision ({@link DecidedIntents}), so a retry after a lost
 * answer or a leader change, or a replay of an intent that had committed after all, is never
 * decided twice. Thread-safe; entries live only while their mutation is in flight here.
 */
final class IntentTags {
    /**
     * A mutation's intent id.
     *
     * @param replay true for the replay of a queued intent (a hit is {@code noop_already_applied})
     * @param assignedByJournal true when the leader's journal assigned it to its own agent's write
     * @param base the write's hand-over base: the log index its origin had applied when it took
     *     the write (its record commits after it); -1 when not known
     * @param forwardedBy the node that forwarded it here, or null for this node's own write
     * @param hold the hold that node reported with the forward ({@link ReplicatedBatch.Decision#hold}),
     *     -1 when none (own writes: this node's hold is taken when the record is built)
     */
    record Tag(String intentId, boolean replay, boolean assignedByJournal, long base, String forwardedBy,
               long hold) {
        /** This node's own write with no known hand-over base. */
        Tag(String intentId, boolean replay, boolean assignedByJournal) {
            this(intentId, replay, assignedByJournal, -1, null, -1);
        }

        /** This node's own write, handed over at {@code base}. */
        static Tag own(String intentId, boolean replay, boolean assignedByJournal, long base) {
            return new Tag(intentId, replay, assignedByJournal, base, null, -1);
        }
    }

    private final Map<Mutation, Tag> tags = Collections.synchronizedMap(new IdentityHashMap<>());

    /** A fresh intent id. */
    static String fresh() {
        return UUID.randomUUID().toString();
    }

    /** The tag of {@code mutation}, or null. */
    Tag of(Mutation mutation) {
        return tags.get(mutation);
    }

    /** Tags {@code mutation} (replacing nothing: an existing tag wins) and returns its tag. */
    Tag tag(Mutation mutation, Tag tag) {
        Tag existing = tags.putIfAbsent(mutation, tag);
        return existing == null ? tag : existing;
    }

    /** Forgets {@code mutation}'s tag if it is {@code tag}. */
    void untag(Mutation mutation, Tag tag) {
        tags.remove(mutation, tag);
    }

    /**
     * The lowest hand-over base among this node's own writes in flight here, or
     * {@code Long.MAX_VALUE} when none: a part of this node's hold.
     */
    long lowestOwnBase() {
        long lowest = Long.MAX_VALUE;
        synchronized (tags) {
            for (Tag t : tags.values()) {
                if (t.forwardedBy() == null) { // an unknown base counts as 0: nothing of this node is forgotten
                    lowest = Math.min(lowest, Math.max(0, t.base()));
                }
            }
        }
        return lowest;
    }

    /** Mutations tagged now (for tests: nothing may stay tagged once answered). */
    int size() {
        return tags.size();
    }
}
