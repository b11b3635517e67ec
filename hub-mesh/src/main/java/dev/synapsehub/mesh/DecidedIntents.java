package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.JsonNode;
import dev.synapsehub.core.actor.Outcome;
import dev.synapsehub.core.journal.JournaledEvent;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The decisions of committed records that carry an intent id, by id: what a leader answers a
 * write whose intent has committed already instead of deciding it again (exactly-once
 * forwarding and replay across a leader change, seed 001 §7–§10). Every node fills it from the
 * records it applies, in log order, so a new leader holds the same entries as the old one once
 * it has applied every record before its term. Touched on the actor thread only.
 *
 * <p>Which ids may be forgotten. Only an id's origin node replays it, only while it holds the
 * write queued or in flight, and the write's record commits after its hand-over base (the index
 * the origin had applied when it took the write). Each origin reports, with every forward (and
 * a leader in its own decisions), its hold: the lowest hand-over base among the writes it
 * still holds (its applied index when none); the leader writes it into the decision. So an id
 * whose record index is at or below its origin's highest reported hold can never be replayed
 * again. The newest {@link #CAPACITY} ids are kept in any case (the window); an older one is
 * forgotten only once its origin's hold has passed it, and kept (pinned) until then. An origin
 * that never reported a hold (an older version) has its ids forgotten past the window.
 *
 * <p>The bound. Pinned ids are at most {@link #PINNED_LIMIT} (an origin whose queue never
 * drains while others write); beyond it the oldest of the origin keeping the most is forgotten
 * all the same, counted and
 * logged, and its origin's forgotten mark rises to its index: a later write of that origin
 * whose hand-over base is below the mark may be that id, so it is refused
 * ({@link #mayHaveForgotten}) instead of being decided a second time.
 */
final class DecidedIntents {
    private static final System.Logger LOG = System.getLogger(DecidedIntents.class.getName());
    /** Ids always remembered: far more than the writes a node retries or queues within a commit timeout. */
    static final int CAPACITY = 8192;
    /** Ids kept past the window because their origin may still replay them, at most. */
    static final int PINNED_LIMIT = 8 * CAPACITY;
    /** A decision's origin as older records and format-2 snapshots leave it: unknown, never pinned. */
    static final String UNKNOWN_ORIGIN = "";

    /** A committed decision, as it was answered. */
    record Decided(JsonNode reply, String storedResponse, List<JournaledEvent> committed) {
        Decided {
            committed = List.copyOf(committed);
        }
    }

    /**
     * A remembered id.
     *
     * @param origin the node that took the write ({@link #UNKNOWN_ORIGIN} when not known)
     * @param index the log index of the record that committed it (0 when not known)
     * @param position its decision's place in that record's batch (0 when not known): ids of one
     *     record are ordered by it, so every node orders, evicts and snapshots them alike
     * @param pinned true once past the window, kept for its origin
     */
    record Remembered(String intentId, String origin, long index, int position, boolean pinned, Decided decided) {
        /** Log order: record index, then place in the batch (the id only for hand-made ties). */
        static final Comparator<Remembered> LOG_ORDER = Comparator.comparingLong(Remembered::index)
                .thenComparingInt(Remembered::position).thenComparing(Remembered::intentId);

        Remembered as(boolean nowPinned) {
            return new Remembered(intentId, origin, index, position, nowPinned, decided);
        }
    }

    /**
     * All a snapshot carries of it.
     *
     * @param remembered the ids, pinned ones first (in log order), then the window oldest first
     * @param holds per origin, the highest hold it reported
     * @param forgotten per origin, the highest record index of an id forgotten while pinned
     */
    record Memory(List<Remembered> remembered, Map<String, Long> holds, Map<String, Long> forgotten) {
        static final Memory EMPTY = new Memory(List.of(), Map.of(), Map.of());

        Memory {
            remembered = List.copyOf(remembered);
            holds = Map.copyOf(holds);
            forgotten = Map.copyOf(forgotten);
        }

        /** Ids of unknown origin and index, oldest first (what a format-2 snapshot holds). */
        static Memory unplaced(Map<String, Decided> decided) {
            List<Remembered> out = new ArrayList<>();
            decided.forEach((id, d) -> out.add(new Remembered(id, UNKNOWN_ORIGIN, 0, 0, false, d)));
            return new Memory(out, Map.of(), Map.of());
        }

        /** The decisions by id, in order. */
        Map<String, Decided> decisions() {
            Map<String, Decided> out = new LinkedHashMap<>();
            remembered.forEach(r -> out.put(r.intentId(), r.decided()));
            return out;
        }
    }

    private final ReplyCodec replies = new ReplyCodec();
    private int capacity;
    private int pinnedLimit;
    private final LinkedHashMap<String, Remembered> window = new LinkedHashMap<>();
    private final Map<String, Remembered> pinned = new HashMap<>();
    /** The pinned ids of each origin, in log order (they leave the window in it). */
    private final Map<String, ArrayDeque<Remembered>> pinnedByOrigin = new TreeMap<>();
    private final Map<String, Long> holds = new HashMap<>();
    private final Map<String, Long> forgotten = new HashMap<>();
    private long forcedOut;

    DecidedIntents() {
        this(CAPACITY, PINNED_LIMIT);
    }

    DecidedIntents(int capacity) {
        this(capacity, PINNED_LIMIT);
    }

    /**
     * @param capacity the window: ids always remembered
     * @param pinnedLimit the ids kept past it for their origins, at most
     */
    DecidedIntents(int capacity, int pinnedLimit) {
        this.capacity = Math.max(1, capacity);
        this.pinnedLimit = Math.max(1, pinnedLimit);
    }

    /**
     * Sets the window and the pinned limit (every node of a mesh must use the same: what each
     * forgets must agree). Before the node starts, or on its actor thread.
     */
    void bound(int capacity, int pinnedLimit) {
        this.capacity = Math.max(1, capacity);
        this.pinnedLimit = Math.max(1, pinnedLimit);
        while (pinned.size() > this.pinnedLimit) {
            forceOutOldest();
        }
        trim();
    }

    /** Remembers the decisions of the committed record at {@code index} that carry an intent id. */
    void record(long index, ReplicatedBatch batch) {
        for (ReplicatedBatch.Decision d : batch.decisions()) {
            if (d.hold() >= 0) {
                raise(d.originNodeId(), d.hold());
            }
        }
        for (int i = 0; i < batch.decisions().size(); i++) {
            ReplicatedBatch.Decision d = batch.decisions().get(i);
            if (d.intentId() != null) {
                add(new Remembered(d.intentId(), d.originNodeId(), index, i, false,
                        new Decided(d.reply(), d.storedResponse(), batch.committedOf(i))));
            }
        }
        trim();
    }

    /** Remembers one decision of unknown origin and index (as a format-2 snapshot restores it). */
    void remember(String intentId, Decided d) {
        add(new Remembered(intentId, UNKNOWN_ORIGIN, 0, 0, false, d));
        trim();
    }

    /** Replaces everything with what a snapshot carried. */
    void restore(Memory memory) {
        clear();
        holds.putAll(memory.holds());
        forgotten.putAll(memory.forgotten());
        for (Remembered r : memory.remembered()) {
            if (r.pinned()) {
                pin(r);
            } else {
                add(r);
            }
        }
        trim();
    }

    private void add(Remembered r) {
        forget(r.intentId());
        window.put(r.intentId(), r.as(false));
    }

    private void forget(String intentId) {
        window.remove(intentId);
        Remembered p = pinned.remove(intentId);
        if (p != null) {
            ArrayDeque<Remembered> of = pinnedByOrigin.get(p.origin());
            of.remove(p);
            if (of.isEmpty()) {
                pinnedByOrigin.remove(p.origin());
            }
        }
    }

    /** Past the window, an id is forgotten once its origin's hold passed it, else pinned. */
    private void trim() {
        while (window.size() > capacity) {
            Remembered eldest = window.values().iterator().next();
            window.remove(eldest.intentId());
            if (!replayable(eldest)) {
                continue;
            }
            pin(eldest);
        }
    }

    /**
     * True while the id's origin may still replay it. Ids of unknown origin, and of an origin that
     * never reported a hold (a node of an older version), are not kept past the window, as before
     * holds existed: nothing would ever release them, so they would fill the pinned slots and push
     * out the ids of origins that do report.
     */
    private boolean replayable(Remembered r) {
        if (UNKNOWN_ORIGIN.equals(r.origin())) {
            return false;
        }
        Long hold = holds.get(r.origin());
        return hold != null && r.index() > hold;
    }

    private void pin(Remembered r) {
        while (pinned.size() >= pinnedLimit) {
            forceOutOldest();
        }
        Remembered p = r.as(true);
        pinned.put(p.intentId(), p);
        ArrayDeque<Remembered> of = pinnedByOrigin.computeIfAbsent(p.origin(), o -> new ArrayDeque<>());
        if (!of.isEmpty() && Remembered.LOG_ORDER.compare(of.peekLast(), p) > 0) {
            // out of log order (never from records; a hand-made snapshot): keep each origin's queue sorted
            List<Remembered> sorted = new ArrayList<>(of);
            sorted.add(p);
            sorted.sort(Remembered.LOG_ORDER);
            of.clear();
            of.addAll(sorted);
        } else {
            of.addLast(p);
        }
    }

    /**
     * At the bound: the oldest pinned id of the origin that keeps the most goes (ties: the origin
     * whose oldest is oldest, then by name), so one origin whose queue never drains forgets its
     * own ids rather than push out the others'. Its origin's later writes below it are refused.
     */
    private void forceOutOldest() {
        ArrayDeque<Remembered> oldest = null;
        for (ArrayDeque<Remembered> of : pinnedByOrigin.values()) { // by origin name: the same choice on every node
            if (oldest == null || of.size() > oldest.size()
                    || (of.size() == oldest.size() && of.peekFirst().index() < oldest.peekFirst().index())) {
                oldest = of;
            }
        }
        Remembered r = oldest.pollFirst();
        if (oldest.isEmpty()) {
            pinnedByOrigin.remove(r.origin());
        }
        pinned.remove(r.intentId());
        forgotten.merge(r.origin(), r.index(), Math::max);
        forcedOut++;
        LOG.log(System.Logger.Level.WARNING, "more than " + pinnedLimit + " intent ids are kept for nodes that may"
                + " still replay them; forgetting intent " + r.intentId() + " of node " + r.origin() + " (index "
                + r.index() + "): a write of that node handed over before that index is refused from now on, not"
                + " decided again");
    }

    /** {@code origin} reported {@code hold}: its ids at or below it can no longer be replayed. */
    private void raise(String origin, long hold) {
        Long before = holds.get(origin);
        if (before != null && before >= hold) {
            return;
        }
        holds.put(origin, hold);
        ArrayDeque<Remembered> of = pinnedByOrigin.get(origin);
        while (of != null && !of.isEmpty() && of.peekFirst().index() <= hold) {
            pinned.remove(of.pollFirst().intentId());
        }
        if (of != null && of.isEmpty()) {
            pinnedByOrigin.remove(origin);
        }
    }

    /** The committed decision of {@code intentId}, or null. */
    Decided get(String intentId) {
        Remembered r = window.get(intentId);
        if (r == null) {
            r = pinned.get(intentId);
        }
        return r == null ? null : r.decided();
    }

    /** The outcome a retry of {@code intentId} is answered with: the first decision; null when none. */
    Outcome.Decided outcome(String intentId) {
        Decided d = get(intentId);
        return d == null ? null : new Outcome.Decided(replies.read(d.reply()), d.committed(), d.storedResponse());
    }

    /**
     * True when a write of {@code origin} handed over at {@code base} (-1: not known) that is
     * not remembered may still have committed: an id of that origin was forgotten at the bound
     * with a record index above {@code base}.
     */
    boolean mayHaveForgotten(String origin, long base) {
        if (!holds.containsKey(origin)) {
            return false; // never reported a hold: its ids are never pinned, so never forced out
        }
        Long mark = forgotten.get(origin);
        return mark != null && mark > base;
    }

    /** Everything, as a snapshot carries it. */
    Memory memory() {
        List<Remembered> out = new ArrayList<>(pinned.values());
        out.sort(Remembered.LOG_ORDER); // not hash order: the same memory, the same snapshot bytes
        out.addAll(window.values());
        return new Memory(out, holds, forgotten);
    }

    /** The remembered decisions, pinned ones first, then the window oldest first. */
    Map<String, Decided> view() {
        return memory().decisions();
    }

    /** Forgets everything (a snapshot replaces the state). */
    void clear() {
        window.clear();
        pinned.clear();
        pinnedByOrigin.clear();
        holds.clear();
        forgotten.clear();
    }

    /** How many are remembered. */
    int size() {
        return window.size() + pinned.size();
    }

    /** How many are kept past the window for their origins. */
    int pinnedCount() {
        return pinned.size();
    }

    /** Ids forgotten at the bound while their origin might still replay them, since start. */
    long forcedOut() {
        return forcedOut;
    }

    /** The highest hold {@code origin} reported, or -1. */
    long hold(String origin) {
        return holds.getOrDefault(origin, -1L);
    }

    /** The ids remembered, pinned ones first, then the window oldest first. */
    List<String> ids() {
        return new ArrayList<>(view().keySet());
    }
}
