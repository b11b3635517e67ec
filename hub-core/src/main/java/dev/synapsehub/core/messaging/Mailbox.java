package dev.synapsehub.core.messaging;

import dev.synapsehub.core.state.StateImage;
import dev.synapsehub.core.undo.UndoLog;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Receiver watermarks (monotonic per identity) and the pending projection: per identity, the
 * seqs of directed chats addressed to it above its watermark (bounded identities, LRU; bounded
 * seqs per identity, oldest dropped). Chat seqs arrive in increasing order, so each identity's
 * pending seqs form an ascending queue cleared from the head.
 *
 * <p>The projection's LRU decides only which identities {@code mailbox_pending} shows (wire
 * contract M1). An identity it pushes out while chats are still pending for it is parked, not
 * forgotten: its chats keep holding journal retention (a reconnect with {@code since_seq}
 * replays them from the rows, INV-DG-3), and a chat or watermark advance for it brings it back
 * with its true count. Parked identities are bounded too ({@code mailboxIdentities}, longest
 * parked dropped first, counted in {@link #droppedWithPending()}).
 */
final class Mailbox {
    private final MessagingLimits limits;
    private final UndoLog undo;
    private final StampedLru<String, Long> watermarks;
    private final StampedLru<String, ArrayDeque<Long>> pending;
    private final StampedLru<String, ArrayDeque<Long>> parked;
    private long droppedWithPending;

    Mailbox(MessagingLimits limits, UndoLog undo) {
        this.limits = limits;
        this.undo = undo;
        this.watermarks = new StampedLru<>(limits.maxWatermarks(), undo);
        this.pending = new StampedLru<>(limits.mailboxIdentities(), undo);
        this.parked = new StampedLru<>(limits.mailboxIdentities(), undo);
    }

    long watermark(String identity) {
        Long w = watermarks.get(identity);
        return w == null ? 0 : w;
    }

    /** A directed chat at {@code seq} is pending for {@code identity} unless already below its watermark. */
    void addPending(String identity, long seq) {
        if (seq <= watermark(identity)) {
            return;
        }
        ArrayDeque<Long> q = queue(identity);
        touch(identity, q);
        q.addLast(seq);
        undo.record(q::removeLast);
        while (q.size() > limits.maxPendingPerIdentity()) {
            Long dropped = q.removeFirst();
            undo.record(() -> q.addFirst(dropped));
        }
    }

    /** Raises the watermark to {@code through} (never lowers it) and clears pending seqs up to it. */
    void advance(String identity, long through) {
        if (through > watermark(identity)) {
            watermarks.put(identity, through);
        }
        long w = watermark(identity);
        ArrayDeque<Long> q = queue(identity);
        touch(identity, q);
        while (!q.isEmpty() && q.peekFirst() <= w) {
            Long dropped = q.removeFirst();
            undo.record(() -> q.addFirst(dropped));
        }
    }

    /** The identity's pending seqs above {@code after}, ascending; read only (no LRU touch). */
    List<Long> pendingAfter(String identity, long after) {
        List<Long> out = new ArrayList<>();
        for (Long seq : queue(identity)) {
            if (seq > after) {
                out.add(seq);
            }
        }
        return out;
    }

    /** The identity's pending seqs, shown or parked; a new empty queue when it has none. */
    private ArrayDeque<Long> queue(String identity) {
        ArrayDeque<Long> q = pending.get(identity);
        if (q == null) {
            q = parked.get(identity);
        }
        return q == null ? new ArrayDeque<>() : q;
    }

    /**
     * Makes {@code identity} the most recent in the projection with queue {@code q}; the
     * identity this pushes out is parked when chats are still pending for it.
     */
    private void touch(String identity, ArrayDeque<Long> q) {
        parked.remove(identity);
        if (!pending.containsKey(identity) && pending.size() >= limits.mailboxIdentities()) {
            String eldest = pending.eldest();
            ArrayDeque<Long> out = pending.remove(eldest);
            if (!out.isEmpty()) {
                park(eldest, out);
            }
        }
        pending.put(identity, q);
    }

    /** Parks an identity with pending chats; beyond the bound the longest parked is dropped, and counted. */
    private void park(String identity, ArrayDeque<Long> q) {
        if (parked.size() >= limits.mailboxIdentities()) {
            parked.remove(parked.eldest());
            droppedWithPending++;
            undo.record(() -> droppedWithPending--);
        }
        parked.put(identity, q);
    }

    /**
     * Identities dropped while chats were still pending for them (their chats no longer hold
     * retention), counted since this state was built, replay included.
     */
    long droppedWithPending() {
        return droppedWithPending;
    }

    /** Identity to pending count, sorted by identity. */
    Map<String, Integer> pendingCounts() {
        Map<String, Integer> out = new TreeMap<>();
        for (Map.Entry<String, ArrayDeque<Long>> e : pending.view().entrySet()) {
            out.put(e.getKey(), e.getValue().size());
        }
        return out;
    }

    Map<String, Long> watermarks() {
        return new TreeMap<>(watermarks.view());
    }

    /** Watermarks, least recently advanced first. */
    List<StateImage.Watermark> watermarkImage() {
        List<StateImage.Watermark> out = new ArrayList<>();
        watermarks.view().forEach((identity, through) -> out.add(new StateImage.Watermark(identity, through)));
        return out;
    }

    /**
     * The pending projection, least recently touched identity first, after the parked ones
     * (longest parked first): restored in this order, the projection's bound parks them again.
     */
    List<StateImage.Pending> pendingImage() {
        List<StateImage.Pending> out = new ArrayList<>();
        parked.view().forEach((identity, seqs) -> out.add(new StateImage.Pending(identity, new ArrayList<>(seqs))));
        pending.view().forEach((identity, seqs) -> out.add(new StateImage.Pending(identity, new ArrayList<>(seqs))));
        return out;
    }

    /** Loads watermarks and the pending projection in image order; every bound in force is re-applied. */
    void restore(List<StateImage.Watermark> marks, List<StateImage.Pending> pendingSeqs) {
        for (StateImage.Watermark w : marks) {
            watermarks.put(w.identity(), w.throughSeq());
        }
        for (StateImage.Pending p : pendingSeqs) {
            ArrayDeque<Long> q = new ArrayDeque<>(p.seqs());
            while (q.size() > limits.maxPendingPerIdentity()) {
                q.removeFirst();
            }
            touch(p.identity(), q);
        }
    }
}
