package dev.synapsehub.core.state;

import dev.synapsehub.core.event.IdempotencyRecordedEvent;
import dev.synapsehub.core.undo.UndoLog;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * First responses of keyed mutations (INV-CR-1, INV-DG-2), bounded: the least recently
 * recorded key is forgotten first once {@code capacity} keys are held, or once the responses
 * together pass {@link #MAX_CHARS} characters (a response can be as large as a frame: a grant
 * resuming a large checkpoint), the newest always kept.
 *
 * <p>Owned by the actor thread, except {@link #findCommitted}: a view of the committed entries
 * that any thread may read, so the edge can answer a keyed retry before any check that depends
 * on the present moment (rate, busy), which must never override a first answer.
 */
public final class IdempotencyLedger {

    /** A remembered first response. */
    public record Entry(String key, String requestDigest, String response) {
    }

    /**
     * A committed entry and when it was recorded, relative to the others: a larger {@code order}
     * was recorded later (re-recording a key makes it the latest). The order is the ledger's own
     * recording order, which replay and a restored image rebuild the same way on every node.
     */
    public record Recorded(Entry entry, long order) {
    }

    /** Characters the held responses may take together (64 Mi, as chat histories): far above 100,000 ordinary ones. */
    public static final long MAX_CHARS = 64L * 1024 * 1024;

    private final int capacity;
    private final long maxChars;
    private long chars;
    /**
     * The held entries with their recording order (so a rollback can restore the eviction order),
     * least recently recorded first. Replaced by {@link #restore}, sized for the image once
     * (100,000 keys would otherwise rehash ~14 times).
     */
    private LinkedHashMap<String, Recorded> entries = new LinkedHashMap<>();
    private long recordings;
    private boolean reorderOnRollback;
    private final UndoLog undo;
    /** The entries as of the last committed batch (replay publishes at once), with their recording order. */
    private volatile ConcurrentHashMap<String, Recorded> committed = new ConcurrentHashMap<>();
    /** Keys recorded or evicted by the batch in progress, published at its commit. */
    private final Set<String> touched = new HashSet<>();

    /** A ledger holding at most {@code capacity} keys (at least one), recording into {@code undo}. */
    public IdempotencyLedger(int capacity, UndoLog undo) {
        this(capacity, MAX_CHARS, undo);
    }

    /** A ledger holding at most {@code capacity} keys and {@code maxChars} characters of responses. */
    IdempotencyLedger(int capacity, long maxChars, UndoLog undo) {
        this.capacity = Math.max(1, capacity);
        this.maxChars = Math.max(0, maxChars);
        this.undo = undo;
    }

    /** A ledger holding at most {@code capacity} keys (at least one), with an undo log of its own. */
    public IdempotencyLedger(int capacity) {
        this(capacity, new UndoLog());
    }

    /** The entry stored under {@code key}, if still retained. */
    public Optional<Entry> find(String key) {
        return Optional.ofNullable(entries.get(key)).map(Recorded::entry);
    }

    /** The committed entry under {@code key}, if retained; safe from any thread. */
    public Optional<Entry> findCommitted(String key) {
        return Optional.ofNullable(committed.get(key)).map(Recorded::entry);
    }

    /** The committed entries, in no particular order; safe from any thread. */
    public List<Entry> committedEntries() {
        List<Entry> out = new ArrayList<>(committed.size());
        committed.values().forEach(r -> out.add(r.entry()));
        return out;
    }

    /** The committed entries with their recording order, in no particular order; safe from any thread. */
    public List<Recorded> committedRecorded() {
        return new ArrayList<>(committed.values());
    }

    /** Applies a recorded event; re-recording a key refreshes it. */
    public void apply(IdempotencyRecordedEvent event) {
        Entry entry = new Entry(event.key(), event.requestDigest(), event.response());
        Recorded previous = entries.remove(entry.key());
        entries.put(entry.key(), new Recorded(entry, ++recordings));
        chars += entry.response().length() - (previous == null ? 0 : previous.entry().response().length());
        List<Recorded> evicted = null;
        while (entries.size() > capacity || (chars > maxChars && entries.size() > 1)) {
            Recorded out = entries.remove(entries.keySet().iterator().next());
            chars -= out.entry().response().length();
            if (evicted == null) {
                evicted = new ArrayList<>(1);
            }
            evicted.add(out);
        }
        boolean firstInBatch = touched.isEmpty();
        touched.add(entry.key());
        if (evicted != null) {
            evicted.forEach(e -> touched.add(e.entry().key()));
        }
        if (firstInBatch) {
            // the committed view learns the batch's keys when it ends (at once outside a batch)
            undo.atBatchEnd(this::endBatch);
        }
        if (undo.isOpen()) {
            List<Recorded> lost = evicted;
            undo.record(() -> {
                entries.remove(entry.key());
                chars -= entry.response().length();
                if (previous != null) {
                    entries.put(previous.entry().key(), previous);
                    chars += previous.entry().response().length();
                    reorderOnRollback = true;
                }
                if (lost != null) {
                    for (Recorded r : lost) {
                        entries.put(r.entry().key(), r);
                        chars += r.entry().response().length();
                    }
                    reorderOnRollback = true;
                }
            });
        }
    }

    /** The held entries, least recently recorded first (the next evicted). */
    public List<Entry> image() {
        List<Entry> out = new ArrayList<>(entries.size());
        for (Recorded r : entries.values()) {
            out.add(r.entry());
        }
        return out;
    }

    /**
     * Loads entries, least recently recorded first, into this empty ledger and publishes them;
     * beyond the capacity in force the oldest are dropped, as replay would (INV-RR-2).
     */
    public void restore(List<Entry> image) {
        if (!entries.isEmpty()) {
            throw new IllegalStateException("restore needs an empty ledger");
        }
        // the newest that fit both bounds, as recording them in order would keep (at least one)
        int from = image.size();
        long keptChars = 0;
        while (from > 0 && image.size() - from < capacity) {
            long next = keptChars + image.get(from - 1).response().length();
            if (next > maxChars && from < image.size()) {
                break;
            }
            keptChars = next;
            from--;
        }
        List<Entry> kept = image.subList(from, image.size());
        int tableSize = (int) Math.min(1 << 30, kept.size() / 0.75 + 1);
        if (kept.size() > 12) {
            entries = new LinkedHashMap<>(tableSize);
            committed = new ConcurrentHashMap<>(kept.size()); // sizes itself for that many
        }
        for (Entry entry : kept) {
            restoreOne(entry);
        }
    }

    /** One image entry, recorded as the latest (a key the image repeats moves to the young end, as replay does). */
    private void restoreOne(Entry entry) {
        Recorded recorded = new Recorded(entry, ++recordings);
        Recorded replaced = entries.put(entry.key(), recorded);
        if (replaced != null) { // put kept the key where it was: move it to the young end
            chars -= replaced.entry().response().length();
            entries.remove(entry.key());
            entries.put(entry.key(), recorded);
        }
        chars += entry.response().length();
        committed.put(entry.key(), recorded);
    }

    /** Number of keys held. */
    public int size() {
        return entries.size();
    }

    /** The bound on keys held. */
    public int capacity() {
        return capacity;
    }

    /** Characters the held responses take together. */
    public long chars() {
        return chars;
    }

    /**
     * The batch ended (after a rollback's undo steps, if it was rolled back): restores the
     * eviction order a rollback disturbed, then publishes the touched keys as they now stand,
     * so a rolled-back key shows its value from before the batch, which it already showed.
     */
    private void endBatch() {
        if (reorderOnRollback) {
            // Restored entries were re-inserted at the young end; put them back where they were
            // so eviction order (and thus the state a replay rebuilds) is exactly as before.
            reorderOnRollback = false;
            List<Recorded> ordered = new ArrayList<>(entries.values());
            ordered.sort(Comparator.comparingLong(Recorded::order));
            entries.clear();
            for (Recorded r : ordered) {
                entries.put(r.entry().key(), r);
            }
        }
        for (String key : touched) {
            Recorded now = entries.get(key);
            if (now == null) {
                committed.remove(key);
            } else {
                committed.put(key, now);
            }
        }
        touched.clear();
    }

    /** Snapshot of keys in retention order, oldest first (for tests and diagnostics). */
    public Map<String, Entry> view() {
        Map<String, Entry> out = new LinkedHashMap<>();
        entries.forEach((key, r) -> out.put(key, r.entry()));
        return java.util.Collections.unmodifiableMap(out);
    }
}
