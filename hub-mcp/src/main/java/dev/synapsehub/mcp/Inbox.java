package dev.synapsehub.mcp;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;

/**
 * What the agent has received and not read yet: chats addressed to it or to everyone, late
 * delivery receipts and notices about it. Bounded: beyond {@code capacity} the oldest item is
 * dropped and counted (the count is reported with the next read). Chats carry the hub's journal
 * {@code seq}; one that was already queued or already read is not queued again, so the mailbox
 * replay after a reconnect does not duplicate.
 *
 * <p>The hub's mailbox watermark is cumulative: an ack of seq N, and a registration's
 * {@code since_seq} N, both count every directed chat up to N read. So a directed chat with a
 * lower seq that the agent has not read yet (still queued: the queue is in arrival order, and
 * the hub sends the mailbox replay after live chats may have arrived) or has read without an
 * ack ({@code ack} false: held) blocks: the ack of a higher seq is owed, not sent, until
 * nothing below it blocks (sent with a later read, in seq order), and the cursor (the
 * {@code since_seq} of the next registration, optionally kept in a file across restarts) stays
 * below the lowest blocker. A directed chat read with an ack releases the holds below it: the
 * agent acknowledged it after reading them, and the hub can only count them read along with
 * it. Without that the cursor would stay behind for the whole session, and the next
 * registration's replay, which scans a bounded window of chats after {@code since_seq}, could
 * end before the chats that arrived while the agent was away.
 *
 * <p>The replay of a registration is not ordered with live chats (the hub reads the journal on
 * a thread of its own, or defers the replay while it is busy), and nothing on the wire says it
 * has ended. So a live chat read before the replayed ones arrived would move the cursor and the
 * cumulative ack past them, and a drop then would lose them. Until this registration's replay is
 * known complete, the cursor and the acks stay at or below its {@code since_seq}, or the highest
 * replayed seq received (the replay is sent in seq order, so every replayed chat below it has
 * come). It is known complete when the hub's {@code mailbox_pending} count for this identity, in
 * the registration's {@code who_snapshot} ({@link #replayPending}), is 0, or when that many
 * directed chats above {@code since_seq} have come: replayed ones, and live ones that came before
 * the snapshot (those the count includes). A count reached early (a chat to a role the agent
 * took while away is replayed but was not counted) ends the hold while the rest of that replay,
 * sent in the same batch, is still arriving.
 *
 * <p>A count may never be reached: a chat counted under a role this connection no longer has,
 * one acked by another connection or evicted between the snapshot and the replay's read, a
 * reference hub's 1,000-chat replay window. The hold has no time bound all the same: the hub
 * retries a deferred replay (a busy hub, a journal read that fails) for as long as the
 * connection lasts, and a live chat acked meanwhile would count the backlog read on the hub and
 * clear it there, so a drop before the replay came would lose it for good. Acks are withheld
 * until the replay is known complete, so that no chat is ever acknowledged before it arrived;
 * the price of a count never reached is acks owed until the next reconnect, and senders may see
 * {@code expired} receipts for chats the agent did read. The only other end is memory: the hold
 * ends once more than {@link #MAX_OWED} acks are owed (logged once, counted in {@link
 * #replayHoldsCut}).
 */
final class Inbox implements AutoCloseable {
    /**
     * One read: the items, how many were dropped for lack of room since the last read, how many
     * remain, and the directed chat seqs to acknowledge now, ascending (some may have been read
     * earlier, their ack owed until then).
     */
    record Batch(List<ObjectNode> items, long dropped, int remaining, List<Long> acks) {
    }

    private final int capacity;
    private final CursorFile cursorFile;
    private final ArrayDeque<ObjectNode> items = new ArrayDeque<>();
    private final Set<Long> queuedSeqs = new HashSet<>();
    /** Seqs of directed chats still queued, unread: they block. At most {@code capacity} of them. */
    private TreeSet<Long> queuedDirected = new TreeSet<>();
    private long readThrough;
    /** The highest seq whose ack was released to the hub: it counts every chat up to it read, for good. */
    private long ackedThrough;
    /**
     * Seqs of directed chats read with an ack, their ack not released yet because a lower one
     * blocks. Fewer than {@code capacity}: each was read while the lowest blocker was queued
     * behind it (a chat queued later has a higher seq than any read, and one read with an ack
     * after a lower one was held releases that hold). A replay's hold aside: that one ends before
     * more than {@link #MAX_OWED} are owed.
     */
    private TreeSet<Long> owed = new TreeSet<>();
    /**
     * Seqs of directed chats read without an ack and above {@link #ackedThrough}: they hold the
     * cursor. At most {@link #MAX_HELD}; beyond, the highest are forgotten into {@link #forgottenLow}
     * and {@link #forgottenHigh}, which hold the cursor as conservatively as they would have.
     */
    private TreeSet<Long> unacked = new TreeSet<>();
    /** Held seqs kept one by one at most (an agent that never acks would otherwise grow the set without end). */
    static final int MAX_HELD = 4096;
    /** The lowest seq a forgotten held chat may still have (0: none forgotten): the cursor stays below it. */
    private long forgottenLow;
    /** The highest held seq forgotten: an ack past it releases them all. */
    private long forgottenHigh;
    private long dropped;
    /**
     * The {@code since_seq} of the current registration (before any: the saved cursor): the hub
     * replays only chats above it, so none at or below it can be new.
     */
    private long registeredFrom;
    /**
     * The seqs read most recently, at most {@link #MAX_RECENT}: above {@link #registeredFrom} a
     * chat is a duplicate only if it was read already. Not the highest seq read: the replay comes
     * after a read on the hub, so live chat 14 may be read before replayed chat 13 arrives, and 13
     * must still be taken.
     */
    private final java.util.LinkedHashSet<Long> recentlyRead = new java.util.LinkedHashSet<>();
    /** Read seqs remembered one by one for duplicates: far more than the 1,000 chats a replay scans. */
    static final int MAX_RECENT = 8192;
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(Inbox.class);
    /** How many times the cursor was found to count in another journal than the hub's, and reset. */
    private long cursorResets;
    /** True from a registration until its replay is known complete: the cursor and acks stay at {@link #replayedTo}. */
    private boolean replayOpen;
    /** The registration's {@code since_seq}, then the highest replayed seq received: all below it have come. */
    private long replayedTo;
    /** The registration's {@code mailbox_pending} count for this identity, or -1 before its snapshot. */
    private long replayExpected = -1;
    /** Directed chats above the registration's {@code since_seq} that count towards {@link #replayExpected}. */
    private final Set<Long> replaySeen = new HashSet<>();
    /** Acks owed at most while a replay holds them (as many as the hub keeps pending per identity): beyond, the hold ends. */
    static final int MAX_OWED = 10_000;
    /** How many replay holds ended by their bound (owed acks) rather than by the count. */
    private long replayHoldsCut;

    /**
     * @param cursorFile where the cursor survives a restart of this process, or null
     */
    Inbox(int capacity, Path cursorFile) throws IOException {
        this(capacity, cursorFile, CursorFile.newWriter());
    }

    /**
     * @param writer brings the cursor file down for replayed chats, one write at a time (a test passes
     *     one it can hold up); shut down by {@link #close}
     */
    Inbox(int capacity, Path cursorFile, ExecutorService writer) throws IOException {
        if (capacity < 1) {
            writer.shutdownNow();
            throw new IllegalArgumentException("inbox capacity must be at least 1");
        }
        this.capacity = capacity;
        try {
            this.cursorFile = new CursorFile(cursorFile, writer);
        } catch (IOException | RuntimeException unreadable) {
            writer.shutdownNow(); // no inbox, so nothing would ever close it
            throw unreadable;
        }
        readThrough = this.cursorFile.saved();
        registeredFrom = readThrough;
    }

    /**
     * Queues an item; {@code seq} is its journal seq, or 0 when it has none (no journal, or not
     * a chat). Returns false when it was a duplicate.
     */
    synchronized boolean offer(ObjectNode item, long seq) {
        if (replayOpen && seq > registeredFrom && item.path("directed").asBoolean()) {
            // counted before the duplicate check: a chat read in an earlier session is replayed and counted too
            boolean replayed = item.path("replayed").asBoolean(false);
            if (replayed) {
                replayedTo = Math.max(replayedTo, seq);
            }
            if (replayed || replayExpected < 0) {
                replaySeen.add(seq);
            }
            checkReplayComplete();
        }
        if (seq > 0 && (seq <= registeredFrom || recentlyRead.contains(seq) || !queuedSeqs.add(seq))) {
            return false;
        }
        items.addLast(item);
        if (seq > 0 && item.path("directed").asBoolean()) {
            queuedDirected.add(seq);
            // a replayed chat below what the file says (a higher one was read first): a restart from the file
            // would never get it back, so the file follows the cursor down; not on this thread (an event loop)
            cursorFile.lowerLater(cursor());
        }
        while (items.size() > capacity) {
            ObjectNode gone = items.removeFirst();
            long goneSeq = seqOf(gone);
            queuedSeqs.remove(goneSeq);
            queuedDirected.remove(goneSeq); // lost, and reported as dropped: it no longer blocks
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
     * capped below the lowest blocker; with {@code ack} false, directed chats taken are held
     * (they block) instead of acknowledged. When the cursor file cannot be written nothing is
     * taken and nothing changes: the items stay queued for the next call rather than being lost
     * behind a cursor that was not saved.
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
        TreeSet<Long> queued = new TreeSet<>(queuedDirected);
        TreeSet<Long> read = new TreeSet<>();
        long through = readThrough;
        for (ObjectNode item : items) {
            if (out.size() >= max) {
                break;
            }
            out.add(item);
            long seq = seqOf(item);
            through = Math.max(through, seq);
            if (seq > 0 && item.path("directed").asBoolean()) {
                queued.remove(seq);
                read.add(seq);
            }
        }
        // worked on copies: a cursor that cannot be saved leaves everything as it was
        TreeSet<Long> held = new TreeSet<>(unacked);
        TreeSet<Long> due = new TreeSet<>(owed);
        long low = forgottenLow;
        long high = forgottenHigh;
        if (ack && !read.isEmpty()) {
            long top = read.last();
            held.headSet(top).clear();
            if (high != 0 && high < top) {
                low = 0;
                high = 0;
            } else if (high != 0) {
                low = Math.max(low, top + 1); // which forgotten ones lie above it is not known
            }
            due.addAll(read);
        } else if (!ack) {
            held.addAll(read.tailSet(ackedThrough, false)); // one an ack already passed is read on the hub
        }
        boundReplayHold(due.size());
        while (held.size() > MAX_HELD) {
            // the highest go: the lowest is what blocks, and it stays exact
            long seq = held.pollLast();
            low = low == 0 ? seq : Math.min(low, seq);
            high = Math.max(high, seq);
        }
        long blocker = blocker(queued, held, low);
        List<Long> acks = new ArrayList<>(due.headSet(blocker));
        due.removeAll(acks);
        cursorFile.save(cursorOf(through, blocker)); // first: a failure leaves the items queued
        for (ObjectNode item : out) {
            items.removeFirst();
            long seq = seqOf(item);
            queuedSeqs.remove(seq);
            if (seq > 0) {
                recentlyRead.add(seq);
                if (recentlyRead.size() > MAX_RECENT) {
                    recentlyRead.remove(recentlyRead.iterator().next());
                }
            }
        }
        queuedDirected = queued;
        readThrough = through;
        unacked = held;
        owed = due;
        forgottenLow = low;
        forgottenHigh = high;
        if (!acks.isEmpty()) {
            ackedThrough = Math.max(ackedThrough, acks.get(acks.size() - 1));
        }
        Batch batch = new Batch(out, dropped, items.size(), acks);
        dropped = 0;
        return batch;
    }

    /**
     * The {@code since_seq} for a registration about to be sent ({@link #cursor()}); chats at or
     * below it are not taken again, since the hub replays none of them.
     */
    synchronized long registering() {
        registeredFrom = cursor(); // still held by a previous replay not known complete: it starts again there
        replayOpen = true;
        replayedTo = registeredFrom;
        replayExpected = -1;
        replaySeen.clear();
        return registeredFrom;
    }

    /**
     * The registration's {@code who_snapshot} said {@code count} directed chats are pending for
     * this identity above its {@code since_seq} (0 too when the hub has no journal): the replay is
     * complete once that many have come (the class comment says which count).
     */
    synchronized void replayPending(long count) {
        if (replayOpen && replayExpected < 0) {
            replayExpected = Math.max(0, count);
            checkReplayComplete();
        }
    }

    /** True while the current registration's replay is not known complete (the cursor and acks are held). */
    synchronized boolean replayOpen() {
        return replayOpen;
    }

    private void checkReplayComplete() {
        if (replayExpected >= 0 && replaySeen.size() >= replayExpected) {
            replayOpen = false;
            replaySeen.clear();
        }
    }

    /**
     * Ends the replay's hold when {@code owedAcks} exceed {@link #MAX_OWED}: a memory bound, not a
     * time bound (the class comment says why there is none).
     */
    private void boundReplayHold(int owedAcks) {
        if (!replayOpen || owedAcks <= MAX_OWED) {
            return;
        }
        replayHoldsCut++;
        LOG.warn("the mailbox replay after since_seq {} brought {} of the {} chats the hub counted pending before {}"
                + " acks were owed; the cursor and acks are no longer held for the rest (a chat still to be replayed"
                + " may be counted read on the hub)", registeredFrom, replaySeen.size(),
                replayExpected < 0 ? "(no count yet)" : replayExpected, owedAcks);
        replayOpen = false;
        replaySeen.clear();
    }

    /** How many replay holds ended by their bound (more than {@link #MAX_OWED} acks owed) before the count was reached. */
    synchronized long replayHoldsCut() {
        return replayHoldsCut;
    }

    /** The seq the next registration sends as {@code since_seq}: read through, but below any blocker. */
    synchronized long cursor() {
        boundReplayHold(owed.size());
        return cursorOf(readThrough, blocker(queuedDirected, unacked, forgottenLow));
    }

    /** {@link #blocker} and, while the replay is open, the first seq it may still bring. */
    private long blocker(TreeSet<Long> queued, TreeSet<Long> held, long forgottenLow) {
        long lowest = lowestBlocker(queued, held, forgottenLow);
        return replayOpen ? Math.min(lowest, replayedTo + 1) : lowest;
    }

    /**
     * The hub said its {@code hub_id} ({@code welcome}); the file records it. Another id than the
     * recorded one does not reset the cursor by itself: a hub started without {@code --hub-id}
     * takes a new id at every start, and a reset would replay from seq 0, whose first 1,000 chats
     * the hub scans, missing the recent ones. A cursor the journal really does not count is shown
     * by a live chat at or below it ({@link #liveSeq}).
     */
    synchronized void hubIdentified(String hubId) {
        if (hubId == null || hubId.isBlank() || hubId.equals(cursorFile.hubId())) {
            return;
        }
        String before = cursorFile.hubId();
        if (before != null) {
            LOG.info("inbox cursor {} was kept for hub {}, the hub is now {}: kept (a live chat at or below it would"
                    + " reset it)", cursor(), before, hubId);
        }
        cursorFile.rebind(hubId, cursor());
    }

    /**
     * A live chat (not a replay) carried {@code seq}. It was journaled after this registration,
     * so on the journal the cursor counts in it would be above the registration's {@code
     * since_seq}: at or below it, the hub's journal is another, or was recreated, and the cursor is
     * reset (as for a fresh agent) rather than hiding every chat up to it for good.
     */
    synchronized void liveSeq(long seq) {
        if (seq > 0 && seq <= registeredFrom) {
            reset("a live chat has seq " + seq + ", at or below the cursor " + registeredFrom
                    + ": the hub's journal is not the one the cursor counts in (recreated, or another hub)", false);
            cursorFile.rebind(cursorFile.hubId(), cursor());
        }
    }

    /** Forgets the cursor and what it held; {@code otherHub}: the seqs read so far were another journal's too. */
    private void reset(String why, boolean otherHub) {
        cursorResets++;
        LOG.warn("inbox cursor {} reset to 0: {}; directed chats are replayed as for a fresh agent", cursor(), why);
        readThrough = 0;
        registeredFrom = 0;
        replayedTo = 0; // an open replay still holds, from the start of this journal
        ackedThrough = 0;
        owed = new TreeSet<>();
        unacked = new TreeSet<>();
        forgottenLow = 0;
        forgottenHigh = 0;
        if (otherHub) {
            recentlyRead.clear();
        }
    }

    /** How many times the cursor was reset for counting in another journal. */
    synchronized long cursorResets() {
        return cursorResets;
    }

    /** How many held seqs are kept one by one (at most {@link #MAX_HELD}). */
    synchronized int heldKept() {
        return unacked.size();
    }

    /** How many times the cursor file could not be brought down for a replayed chat. */
    long cursorLoweringsFailed() {
        return cursorFile.loweringsFailed();
    }

    /** How many acks are owed (read with an ack, not released because a lower directed chat blocks). */
    synchronized int acksOwed() {
        return owed.size();
    }

    /** The lowest seq that blocks acks and the cursor (unread, or held), or {@link Long#MAX_VALUE}. */
    private static long lowestBlocker(TreeSet<Long> queued, TreeSet<Long> held, long forgottenLow) {
        long lowest = Long.MAX_VALUE;
        if (!queued.isEmpty()) {
            lowest = queued.first();
        }
        if (!held.isEmpty()) {
            lowest = Math.min(lowest, held.first());
        }
        if (forgottenLow > 0) {
            lowest = Math.min(lowest, forgottenLow);
        }
        return lowest;
    }

    /** The journal seq of a queued item as {@link HubLink} offered it: an integer, or 0. */
    private static long seqOf(ObjectNode item) {
        JsonNode seq = item.get("seq");
        return seq != null && seq.isIntegralNumber() && seq.canConvertToLong() ? seq.longValue() : 0;
    }

    private static long cursorOf(long through, long blocker) {
        return blocker == Long.MAX_VALUE ? through : Math.min(through, blocker - 1);
    }

    /** Lets a lowering of the cursor file still queued finish, then stops its writer. */
    @Override
    public void close() {
        cursorFile.close();
    }
}
