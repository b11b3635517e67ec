package dev.synapsehub.core.claim;

import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.BiConsumer;

/**
 * Checkpoints kept from lapsed leases for the next claimant, oldest first, at most a bound
 * of them and of their characters together (the oldest is dropped first): each checkpoint may
 * be as large as a frame, so a count alone would let 100,000 of them hold ~100 GB.
 *
 * <p>Each entry carries the sequence number it was retained at and the order is that
 * sequence, not the order of map insertions: an entry a rolled-back batch dropped is
 * {@link #reinstate reinstated} at its original place, so the retention (and eviction) order
 * after a rollback is exactly the one a replay of the committed events rebuilds (INV-RR-1).
 * A plain insertion-ordered map would put it back at the young end. Lookup and drop-miss are
 * O(1); retain, drop-hit, reinstate and eviction are O(log n). Not thread-safe.
 */
final class RetainedCheckpoints {

    /** One retained checkpoint and the sequence it was retained at; what an undo step keeps. */
    record Slot(long seq, String checkpoint) {
    }

    /** Characters all retained checkpoints may hold together by default (64 Mi, as chat histories). */
    static final long MAX_CHARS = 64L * 1024 * 1024;

    private final int bound;
    private final long maxChars;
    private final Map<String, Slot> byTask = new HashMap<>();
    private final TreeMap<Long, String> bySeq = new TreeMap<>();
    private long sequence;
    private long chars;

    /** A store keeping at most {@code bound} checkpoints (at least one) of {@link #MAX_CHARS} characters. */
    RetainedCheckpoints(int bound) {
        this(bound, MAX_CHARS);
    }

    /** A store keeping at most {@code bound} checkpoints (at least one) of {@code maxChars} characters together. */
    RetainedCheckpoints(int bound, long maxChars) {
        this.bound = Math.max(1, bound);
        this.maxChars = Math.max(0, maxChars);
    }

    /** The checkpoint retained for {@code taskId}, or {@code null}. */
    String get(String taskId) {
        Slot slot = byTask.get(taskId);
        return slot == null ? null : slot.checkpoint();
    }

    /**
     * Retains {@code checkpoint} for {@code taskId} as the youngest entry, dropping the oldest
     * beyond the bound. A task already present keeps its place and takes the new text, as an
     * insertion-ordered map would (a live claim never coexists with its retained entry, so
     * this does not arise from events; it keeps restore of a hand-made image well defined).
     */
    void retain(String taskId, String checkpoint) {
        Slot present = byTask.get(taskId);
        if (present != null) {
            byTask.put(taskId, new Slot(present.seq(), checkpoint));
            chars += checkpoint.length() - present.checkpoint().length();
            trim();
            return;
        }
        long seq = ++sequence;
        byTask.put(taskId, new Slot(seq, checkpoint));
        bySeq.put(seq, taskId);
        chars += checkpoint.length();
        trim();
    }

    /** Removes the entry for {@code taskId}; returns it (for an undo step) or {@code null}. */
    Slot drop(String taskId) {
        Slot slot = byTask.remove(taskId);
        if (slot != null) {
            bySeq.remove(slot.seq());
            chars -= slot.checkpoint().length();
        }
        return slot;
    }

    /**
     * Undo of {@link #drop}: puts {@code slot} back at its original place in the order. An
     * entry retained for the task since (its rolled-back claim lapsed within the batch) is
     * replaced, since a replay never saw that claim. Expiry inside the batch is not undone, so
     * a checkpoint retained meanwhile may have filled the room this entry left: the bound is
     * re-applied oldest first, which evicts what a replay (where the entry never left) evicts.
     */
    void reinstate(String taskId, Slot slot) {
        drop(taskId);
        byTask.put(taskId, slot);
        bySeq.put(slot.seq(), taskId);
        chars += slot.checkpoint().length();
        trim();
    }

    /** Drops the oldest while over either bound (the newest alone may exceed the characters: then it goes too). */
    private void trim() {
        while (bySeq.size() > bound || (chars > maxChars && !bySeq.isEmpty())) {
            Slot evicted = byTask.remove(bySeq.pollFirstEntry().getValue());
            chars -= evicted.checkpoint().length();
        }
    }

    /** Characters the retained checkpoints hold together. */
    long chars() {
        return chars;
    }

    /** Visits every entry oldest first (the next evicted first). */
    void forEach(BiConsumer<String, String> visitor) {
        for (String taskId : bySeq.values()) {
            visitor.accept(taskId, byTask.get(taskId).checkpoint());
        }
    }

    /** Number of checkpoints retained. */
    int size() {
        return byTask.size();
    }

    boolean isEmpty() {
        return byTask.isEmpty();
    }
}
