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
    /** Replaced by {@link #restore}, sized for the image once (100,000 keys would otherwise rehash ~14 times). */
    private LinkedHashMap<String, Entry> entries = new LinkedHashMap<>();
    /** Recording order of each held key, so a rollback can restore the eviction order. */
    private java.util.HashMap<String, Long> recordedAt = new java.util.HashMap<>();
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
        return Optional.ofNullable(entries.get(key));
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
        Entry previous = entries.remove(entry.key());
        Long previousAt = recordedAt.put(entry.key(), ++recordings);
        entries.put(entry.key(), entry);
        chars += entry.response().length() - (previous == null ? 0 : previous.response().length());
        List<Entry> evicted = null;
        List<Long> evictedAt = null;
        while (entries.size() > capacity || (chars > maxChars && entries.size() > 1)) {
            String eldest = entries.keySet().iterator().next();
            Entry out = entries.remove(eldest);
            chars -= out.response().length();
            if (evicted == null) {
                evicted = new ArrayList<>(1);
                evictedAt = new ArrayList<>(1);
            }
            evicted.add(out);
            evictedAt.add(recordedAt.remove(eldest));
        }
        boolean firstInBatch = touched.isEmpty();
        touched.add(entry.key());
        if (evicted != null) {
            evicted.forEach(e -> touched.add(e.key()));
        }
        if (firstInBatch) {
            // the committed view learns the batch's keys when it ends (at once outside a batch)
            undo.atBatchEnd(this::endBatch);
        }
        if (undo.isOpen()) {
            List<Entry> lost = evicted;
            List<Long> lostAt = evictedAt;
            undo.record(() -> {
                entries.remove(entry.key());
                recordedAt.remove(entry.key());
                chars -= entry.response().length();
                if (previous != null) {
                    entries.put(previous.key(), previous);
                    recordedAt.put(previous.key(), previousAt);
                    chars += previous.response().length();
                    reorderOnRollback = true;
                }
                if (lost != null) {
                    for (int i = 0; i < lost.size(); i++) {
                        entries.put(lost.get(i).key(), lost.get(i));
                        recordedAt.put(lost.get(i).key(), lostAt.get(i));
                        chars += lost.get(i).response().length();
                    }
                    reorderOnRollback = true;
                }
            });
        }
    }

    /** The held entries, least recently recorded first (the next evicted). */
    public List<Entry> image() {
        return new ArrayList<>(entries.values());
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
            recordedAt = new java.util.HashMap<>(tableSize);
            committed = new ConcurrentHashMap<>(kept.size()); // sizes itself for that many
        }
        for (Entry entry : kept) {
            Entry replaced = entries.remove(entry.key());
            if (replaced != null) {
                chars -= replaced.response().length();
            }
            chars += entry.response().length();
            entries.put(entry.key(), entry);
            recordedAt.put(entry.key(), ++recordings);
            committed.put(entry.key(), new Recorded(entry, recordings));
        }
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
            List<Entry> ordered = new ArrayList<>(entries.values());
            ordered.sort(Comparator.comparingLong(e -> recordedAt.get(e.key())));
            entries.clear();
            for (Entry e : ordered) {
                entries.put(e.key(), e);
            }
        }
        for (String key : touched) {
            Entry now = entries.get(key);
            if (now == null) {
                committed.remove(key);
            } else {
                committed.put(key, new Recorded(now, recordedAt.get(key)));
            }
        }
        touched.clear();
    }

    /** Snapshot of keys in retention order, oldest first (for tests and diagnostics). */
    public Map<String, Entry> view() {
        return java.util.Collections.unmodifiableMap(new LinkedHashMap<>(entries));
    }
}
