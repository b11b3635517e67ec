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

/**
 * What the agent has received and not read yet: chats addressed to it or to everyone, late
 * delivery receipts and notices about it. Bounded: beyond {@code capacity} the oldest item is
 * dropped and counted (the count is reported with the next read). Chats carry the hub's journal
 * {@code seq}; one that was already queued or already read is not queued again, so the mailbox
 * replay after a reconnect does not duplicate. The highest seq read is the cursor the next
 * registration sends as {@code since_seq}, optionally kept in a file across restarts.
 */
final class Inbox {
    /** One read: the items, how many were dropped for lack of room since the last read, how many remain. */
    record Batch(List<ObjectNode> items, long dropped, int remaining) {
    }

    private final int capacity;
    private final Path cursorFile;
    private final ArrayDeque<ObjectNode> items = new ArrayDeque<>();
    private final Set<Long> queuedSeqs = new HashSet<>();
    private long readThrough;
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
        while (items.size() > capacity) {
            ObjectNode gone = items.removeFirst();
            queuedSeqs.remove(gone.path("seq").asLong(0));
            dropped++;
        }
        notifyAll();
        return true;
    }

    /**
     * Takes up to {@code max} items, oldest first, waiting up to {@code waitMillis} for the first
     * one. The highest chat seq taken becomes the cursor (and is written to the cursor file).
     * When the cursor file cannot be written nothing is taken: the items stay queued for the next
     * call rather than being lost behind a cursor that was not saved.
     */
    synchronized Batch take(int max, long waitMillis) throws InterruptedException, IOException {
        long deadline = System.nanoTime() + waitMillis * 1_000_000L;
        while (items.isEmpty()) {
            long left = (deadline - System.nanoTime()) / 1_000_000L;
            if (left <= 0) {
                break;
            }
            wait(left);
        }
        List<ObjectNode> out = new ArrayList<>();
        long through = readThrough;
        for (ObjectNode item : items) {
            if (out.size() >= max) {
                break;
            }
            out.add(item);
            through = Math.max(through, item.path("seq").asLong(0));
        }
        if (through != readThrough) {
            saveCursor(through); // first: a failure leaves the items queued
        }
        for (ObjectNode item : out) {
            items.removeFirst();
            queuedSeqs.remove(item.path("seq").asLong(0));
        }
        readThrough = through;
        Batch batch = new Batch(out, dropped, items.size());
        dropped = 0;
        return batch;
    }

    /** The highest chat seq the agent has read (0 when none). */
    synchronized long cursor() {
        return readThrough;
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
