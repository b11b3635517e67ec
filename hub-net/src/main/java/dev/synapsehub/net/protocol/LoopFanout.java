package dev.synapsehub.net.protocol;

import dev.synapsehub.net.session.Session;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;
import java.util.function.Predicate;

/**
 * One event loop's share of broadcast delivery. Broadcast batches (already encoded WebSocket
 * frames) queue here in commit order; a drain pass walks the loop's members and hands each one
 * everything it has not been given yet in a single flush, yielding to the loop's I/O every
 * 128 members. A batch's requesters are served at once; the others after a short linger, so
 * that the agent that caused a broadcast does not wait for ten thousand others to get it, and
 * its next exchange (a claim's release, say) usually joins the same pass: one write per socket
 * instead of two. Every frame for a member (broadcast or private) is written on this loop after
 * the member has been caught up, so each connection still sees frames in commit order.
 * Confined to its event loop.
 */
final class LoopFanout {
    /** Member visits per task before the loop gets to read and write sockets again. */
    private static final int VISITS_PER_TASK = 128;

    /** A batch; its own indices never move (members are written duplicates). */
    private record Pending(long seq, ByteBuf frames, long publishedAt, BacklogShare backlog) {
    }

    private final EventLoop loop;
    private final long lingerNanos;
    private final Predicate<Session> deliverable;
    private final Predicate<Session> deliverableWhileClosing;
    private final AtomicLong backlogBytes;
    private final LongConsumer fanoutDelay;
    private final List<Session> members = new ArrayList<>();
    /** Undelivered batches, seqs consecutive, oldest first. */
    private final List<Pending> pending = new ArrayList<>();
    private final Runnable drainTask = this::drain;
    private long newest;
    /** Members before this index were visited in the current pass. */
    private int next;
    /** The lowest seq every member visited in this pass has been given. */
    private long passFloor = Long.MAX_VALUE;
    private boolean draining;

    /**
     * @param lingerNanos how long a batch waits for company before a pass starts
     * @param deliverable whether a member may be written to now (may close it as a side effect)
     * @param deliverableWhileClosing the same for a member the hub is closing, which still gets
     *        what was broadcast before the close
     * @param backlogBytes the backlog a batch handed to {@link #accept(ByteBuf, List)} counts in
     *        (batches from the outbox come with their own {@link BacklogShare})
     * @param fanoutDelay told, per batch, the nanoseconds from its publication until every member
     *        of this loop had been handed it
     */
    LoopFanout(EventLoop loop, long lingerNanos, Predicate<Session> deliverable,
               Predicate<Session> deliverableWhileClosing, AtomicLong backlogBytes, LongConsumer fanoutDelay) {
        this.loop = loop;
        this.lingerNanos = Math.max(0, lingerNanos);
        this.deliverable = deliverable;
        this.deliverableWhileClosing = deliverableWhileClosing;
        this.backlogBytes = backlogBytes;
        this.fanoutDelay = fanoutDelay;
    }

    /** A fan-out whose delays nobody observes. */
    LoopFanout(EventLoop loop, long lingerNanos, Predicate<Session> deliverable,
               Predicate<Session> deliverableWhileClosing, AtomicLong backlogBytes) {
        this(loop, lingerNanos, deliverable, deliverableWhileClosing, backlogBytes, nanos -> { });
    }

    EventLoop loop() {
        return loop;
    }

    /** Adds a member: it receives batches accepted from now on. */
    void join(Session s) {
        s.fanoutDelivered(newest);
        s.fanoutIndex(members.size());
        members.add(s);
    }

    /** Removes a member, keeping the current pass's visited members before {@link #next}. */
    void leave(Session s) {
        int i = s.fanoutIndex();
        if (i < 0 || i >= members.size() || members.get(i) != s) {
            return;
        }
        int last = members.size() - 1;
        if (i < next) {
            // Fill the hole with the last visited member, and its slot with the last member
            // (if that is another one), which then sits at the start of the unvisited part.
            int lastVisited = next - 1;
            move(lastVisited, i);
            if (last != lastVisited) {
                move(last, lastVisited);
            }
            next--;
        } else {
            move(last, i);
        }
        members.remove(last);
        s.fanoutIndex(-1);
        if (members.isEmpty()) {
            releaseUpTo(newest, false);
        }
    }

    /** {@link #accept(ByteBuf, List, long, BacklogShare)} of a batch published now, for this loop alone. */
    void accept(ByteBuf frames, List<Session> origins) {
        accept(frames, origins, System.nanoTime(), new BacklogShare(backlogBytes, frames.readableBytes(), 1));
    }

    /**
     * Queues one batch (takes over one reference to {@code frames}) published at
     * {@code publishedAt} ({@link System#nanoTime()}), whose bytes {@code backlog} counts until
     * this loop releases it, and serves the requesters among this loop's members at once.
     */
    void accept(ByteBuf frames, List<Session> origins, long publishedAt, BacklogShare backlog) {
        if (members.isEmpty()) {
            frames.release();
            backlog.release();
            newest++;
            return;
        }
        newest++;
        pending.add(new Pending(newest, frames, publishedAt, backlog));
        for (Session origin : origins) {
            if (isMember(origin)) {
                catchUp(origin);
            }
        }
        if (!draining) {
            // Not now: after the linger (and at least the loop's next I/O pass), so that
            // batches arriving meanwhile go out to each member in the same write (the
            // requesters already have theirs).
            draining = true;
            loop.schedule(drainTask, lingerNanos, TimeUnit.NANOSECONDS);
        }
    }

    /** Marks every batch queued so far as not for {@code s}: it was outside the audience then. */
    void skipQueued(Session s) {
        if (isMember(s)) {
            s.fanoutDelivered(newest);
        }
    }

    /** Writes to {@code s} every queued batch it has not been given, in order. */
    void catchUp(Session s) {
        catchUp(s, deliverable);
    }

    /**
     * The hub is closing {@code s}: it gets what was broadcast before the close (its last
     * frames follow), then leaves.
     */
    void finish(Session s) {
        catchUp(s, deliverableWhileClosing);
        leave(s);
    }

    private void catchUp(Session s, Predicate<Session> mayWrite) {
        long delivered = s.fanoutDelivered();
        if (delivered >= newest || !isMember(s)) {
            return;
        }
        s.fanoutDelivered(newest);
        if (!mayWrite.test(s)) {
            return;
        }
        Channel channel = s.channel();
        int from = (int) (delivered + 1 - pending.get(0).seq());
        for (int k = from; k < pending.size(); k++) {
            // asked again before each further batch: the hard cap counts what this pass has
            // queued already, so a slow reader is dropped at most one batch past it
            if (k > from && !mayWrite.test(s)) {
                break;
            }
            channel.write(pending.get(k).frames().retainedDuplicate(), channel.voidPromise());
        }
        channel.flush();
    }

    /** Gives every member what it has not had yet, now, and releases every batch (shutdown). */
    void deliverAll() {
        for (Session member : new ArrayList<>(members)) {
            catchUp(member);
        }
        releaseUpTo(newest, true);
    }

    /** Batches waiting for at least one member (for tests and metrics). */
    int pendingBatches() {
        return pending.size();
    }

    int memberCount() {
        return members.size();
    }

    private void drain() {
        int visits = 0;
        while (true) {
            if (next >= members.size()) {
                releaseUpTo(members.isEmpty() ? newest : passFloor, !members.isEmpty());
                next = 0;
                passFloor = Long.MAX_VALUE;
                if (pending.isEmpty()) {
                    draining = false;
                    return;
                }
                if (lingerNanos > 0) {
                    // batches that came during the pass: the members visited before them wait
                    // a linger too, for more company
                    loop.schedule(drainTask, lingerNanos, TimeUnit.NANOSECONDS);
                    return;
                }
            }
            Session member = members.get(next++);
            catchUp(member);
            passFloor = Math.min(passFloor, member.fanoutDelivered());
            if (++visits >= VISITS_PER_TASK) {
                // A scheduled task runs only after the loop's next I/O pass; a re-queued one
                // could run straight away, up to 64 times in a row, starving reads.
                loop.schedule(drainTask, 0, TimeUnit.NANOSECONDS);
                return;
            }
        }
    }

    private boolean isMember(Session s) {
        int i = s.fanoutIndex();
        return i >= 0 && i < members.size() && members.get(i) == s;
    }

    private void move(int from, int to) {
        Session s = members.get(from);
        members.set(to, s);
        s.fanoutIndex(to);
    }

    /** Releases the batches up to {@code seq}; {@code delivered}: every member was handed them. */
    private void releaseUpTo(long seq, boolean delivered) {
        int n = 0;
        long now = delivered ? System.nanoTime() : 0;
        while (n < pending.size() && pending.get(n).seq() <= seq) {
            if (delivered) {
                fanoutDelay.accept(now - pending.get(n).publishedAt());
            }
            pending.get(n).frames().release();
            pending.get(n).backlog().release();
            n++;
        }
        pending.subList(0, n).clear();
    }
}
