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
 */
final class Mailbox {
    private final MessagingLimits limits;
    private final UndoLog undo;
    private final StampedLru<String, Long> watermarks;
    private final StampedLru<String, ArrayDeque<Long>> pending;

    Mailbox(MessagingLimits limits, UndoLog undo) {
        this.limits = limits;
        this.undo = undo;
        this.watermarks = new StampedLru<>(limits.maxWatermarks(), undo);
        this.pending = new StampedLru<>(limits.mailboxIdentities(), undo);
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
        ArrayDeque<Long> seqs = pending.get(identity);
        if (seqs == null) {
            seqs = new ArrayDeque<>();
        }
        pending.put(identity, seqs);
        ArrayDeque<Long> q = seqs;
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
        ArrayDeque<Long> q = pending.get(identity);
        if (q == null) {
            pending.put(identity, new ArrayDeque<>());
            return;
        }
        pending.put(identity, q);
        while (!q.isEmpty() && q.peekFirst() <= w) {
            Long dropped = q.removeFirst();
            undo.record(() -> q.addFirst(dropped));
        }
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

    /** The pending projection, least recently touched identity first. */
    List<StateImage.Pending> pendingImage() {
        List<StateImage.Pending> out = new ArrayList<>();
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
            pending.put(p.identity(), q);
        }
    }
}
