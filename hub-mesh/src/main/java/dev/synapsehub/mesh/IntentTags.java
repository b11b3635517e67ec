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
     */
    record Tag(String intentId, boolean replay, boolean assignedByJournal) {
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

    /** Mutations tagged now (for tests: nothing may stay tagged once answered). */
    int size() {
        return tags.size();
    }
}
