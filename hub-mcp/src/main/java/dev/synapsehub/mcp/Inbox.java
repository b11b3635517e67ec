package dev.synapsehub.mcp;

import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * What the agent has received and not read yet: chats addressed to it or to everyone, late
 * delivery receipts and notices about it. Bounded: beyond {@code capacity} the oldest item is
 * dropped and counted (the count is reported with the next read). Chats carry the hub's journal
 * {@code seq}; one that was already queued or already read is not queued again, so the mailbox
 * replay after a reconnect does not duplicate. The highest seq read is the cursor the next
 * registration sends as {@code since_seq}, optionally kept in a file across restarts, but never
 * past a directed chat still queued: the queue is not in seq order (the hub sends the mailbox
 * replay after live chats may have arrived), and the next registration replays only what lies
 * after the cursor. Likewise a directed chat read without acknowledging it holds the cursor below its seq: a
 * registration's {@code since_seq} raises the hub's mailbox watermark just as an ack does, so a
 * cursor past it would count it read after all. The hold lasts until a directed chat with a
 * higher seq is read with an ack: the hub's ack is cumulative (the watermark moves to the acked
 * seq, counting every earlier chat read), so the cursor may move up to it too. Otherwise the
 * cursor would stay behind for the whole session, and the next registration's replay, which
 * scans a bounded window of chats after {@code since_seq}, could end before the chats that
 * arrived while the agent was away.
 */
final class Inbox {
    /** One read: the items, how many were dropped for lack of room since the last read, how many remain. */
    record Batch(List<ObjectNode> items, long dropped, int remaining) {
    }

    private final int capacity;
    private final Path cursorFile;
    private final ArrayDeque<ObjectNode> items = new ArrayDeque<>();
    private final Set<Long> queuedSeqs = new HashSet<>();
    /**
     * Seqs of directed chats still queued, unread: the cursor stays below the lowest. The queue
     * is not in seq order (the mailbox replay comes after live chats), and a cursor past a queued
     * chat would make the next registration skip it. At most {@code capacity} of them.
     */
    private final TreeSet<Long> queuedDirected = new TreeSet<>();
    private long readThrough;
    /** The highest seq of a directed chat read with an ack: the hub counts every chat up to it read. */
    private long ackedThrough;
    /**
     * Seqs of directed chats read without an ack and above {@link #ackedThrough}: they hold the
     * cursor. At most {@link #MAX_HELD}; beyond, the highest are forgotten into {@link #forgottenLow}
     * and {@link #forgottenHigh}, which hold the cursor as conservatively as they would have.
     */
    private final TreeSet<Long> unacked = new TreeSet<>();
    /** Held seqs kept one by one at most (an agent that never acks would otherwise grow the set without end). */
    static final int MAX_HELD = 4096;
    /** The lowest seq a forgotten held chat may still have (0: none forgotten): the cursor stays below it. */
    private long forgottenLow;
    /** The highest held seq forgotten: an ack at or past it releases them all. */
    private long forgottenHigh;
    private long dropped;

    /**
     * @param cursorFile where the cursor survives a restart of this process, or null
     */
    Inbox(int capacity, Path cursorFile) throws IOException {
        if (capacity < 1) {
            throw new IllegalArgumentException("inbox capacity must be at least 1");
        }
        this.capacity = capacity;
        this.cursorFile = cursorFile;
        if (cursorFile != null && Files.exists(cursorFile)) {
            String text = Files.readString(cursorFile, StandardCharsets.UTF_8).strip();
            try {
                readThrough = text.isEmpty() ? 0 : Math.max(0, Long.parseLong(text));
            } catch (NumberFormatException e) {
                throw new IOException(cursorFile + ": not a cursor (expected one integer, found '" + text + "')");
            }
        }
    }

    /**
     * Queues an item; {@code seq} is its journal seq, or 0 when it has none (no journal, or not
     * a chat). Returns false when it was a duplicate.
     */
    synchronized boolean offer(ObjectNode item, long seq) {
        if (seq > 0 && (seq <= readThrough || !queuedSeqs.add(seq))) {
            return false;
        }
        items.addLast(item);
        if (seq > 0 && item.path("directed").asBoolean()) {
            queuedDirected.add(seq);
        }
        while (items.size() > capacity) {
            ObjectNode gone = items.removeFirst();
            long goneSeq = gone.path("seq").asLong(0);
            queuedSeqs.remove(goneSeq);
            queuedDirected.remove(goneSeq); // lost, and reported as dropped: it no longer holds the cursor
            dropped++;
        }
        notifyAll();
        return true;
    }

    /** Takes up to {@code max} items, acknowledged: {@link #take(int, long, boolean)} with {@code ack} true. */
    Batch take(int max, long waitMillis) throws InterruptedException, IOException {
        return take(max, waitMillis, true);
    }

    /**
     * Takes up to {@code max} items, oldest first, waiting up to {@code waitMillis} for the first
     * one. The highest chat seq taken becomes the cursor (and is written to the cursor file),
     * capped below the lowest directed chat still queued;
     * with {@code ack} false, directed chats taken hold the cursor below them instead, until a
     * later take with {@code ack} passes them. When the cursor file cannot be written nothing is
     * taken: the items stay queued for the next call rather than being lost behind a cursor that
     * was not saved.
     */
    synchronized Batch take(int max, long waitMillis, boolean ack) throws InterruptedException, IOException {
        long deadline = System.nanoTime() + waitMillis * 1_000_000L;
        while (items.isEmpty()) {
            long left = (deadline - System.nanoTime()) / 1_000_000L;
            if (left <= 0) {
                break;
            }
            wait(left);
        }
        List<ObjectNode> out = new ArrayList<>();
        List<Long> held = new ArrayList<>();
        long through = readThrough;
        long acked = ackedThrough;
        for (ObjectNode item : items) {
            if (out.size() >= max) {
                break;
            }
            out.add(item);
            long seq = item.path("seq").asLong(0);
            through = Math.max(through, seq);
            if (seq > 0 && item.path("directed").asBoolean()) {
                if (ack) {
                    acked = Math.max(acked, seq);
                } else if (seq > ackedThrough) {
                    held.add(seq); // one already passed by an ack counts as read on the hub: no hold
                }
            }
        }
        Long lowest = unacked.higher(acked);
        long forgotten = forgottenAbove(acked);
        if (forgotten > 0) {
            lowest = lowest == null ? forgotten : Math.min(lowest, forgotten);
        }
        for (long seq : held) {
            lowest = lowest == null ? seq : Math.min(lowest, seq);
        }
        Long stillQueued = lowestQueuedDirectedAfter(out);
        if (stillQueued != null) {
            lowest = lowest == null ? stillQueued : Math.min(lowest, stillQueued);
        }
        long before = cursor();
        long after = cursorOf(through, lowest == null ? Long.MAX_VALUE : lowest);
        if (after != before) {
            saveCursor(after); // first: a failure leaves the items queued
        }
        for (ObjectNode item : out) {
            items.removeFirst();
            long seq = item.path("seq").asLong(0);
            queuedSeqs.remove(seq);
            queuedDirected.remove(seq);
        }
        readThrough = through;
        ackedThrough = acked;
        unacked.headSet(acked, true).clear();
        forgottenLow = forgottenAbove(acked);
        if (forgottenLow == 0) {
            forgottenHigh = 0;
        }
        unacked.addAll(held);
        while (unacked.size() > MAX_HELD) {
            // the highest go: the lowest is what holds the cursor, and it stays exact
            long seq = unacked.pollLast();
            forgottenLow = forgottenLow == 0 ? seq : Math.min(forgottenLow, seq);
            forgottenHigh = Math.max(forgottenHigh, seq);
        }
        Batch batch = new Batch(out, dropped, items.size());
        dropped = 0;
        return batch;
    }

    /** The seq the next registration sends as {@code since_seq}: read through, but below any unacknowledged or unread directed chat. */
    synchronized long cursor() {
        long lowest = unacked.isEmpty() ? Long.MAX_VALUE : unacked.first();
        long forgotten = forgottenAbove(ackedThrough);
        if (forgotten > 0) {
            lowest = Math.min(lowest, forgotten);
        }
        if (!queuedDirected.isEmpty()) {
            lowest = Math.min(lowest, queuedDirected.first());
        }
        return cursorOf(readThrough, lowest);
    }

    /** The lowest seq of a directed chat still queued once {@code taken} (the head of the queue) is gone. */
    private Long lowestQueuedDirectedAfter(List<ObjectNode> taken) {
        Set<Long> gone = new HashSet<>();
        for (ObjectNode item : taken) {
            gone.add(item.path("seq").asLong(0));
        }
        for (long seq : queuedDirected) {
            if (!gone.contains(seq)) {
                return seq;
            }
        }
        return null;
    }

    /** How many held seqs are kept one by one (at most {@link #MAX_HELD}). */
    synchronized int heldKept() {
        return unacked.size();
    }

    /**
     * The lowest seq a forgotten held chat may have once everything through {@code acked} is
     * acked, or 0 when none can be left: an ack past the highest forgotten releases them all; one
     * between releases those below it, and which of the rest remain is not known, so the next
     * seq after the ack holds the cursor.
     */
    private long forgottenAbove(long acked) {
        if (forgottenHigh == 0 || forgottenHigh <= acked) {
            return 0;
        }
        return Math.max(forgottenLow, acked + 1);
    }

    private static long cursorOf(long through, long unacked) {
        return unacked == Long.MAX_VALUE ? through : Math.min(through, unacked - 1);
    }

    private void saveCursor(long value) throws IOException {
        if (cursorFile == null) {
            return;
        }
        Path tmp = cursorFile.resolveSibling(cursorFile.getFileName() + ".tmp");
        Files.writeString(tmp, value + "\n", StandardCharsets.UTF_8);
        Files.move(tmp, cursorFile, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }
}
