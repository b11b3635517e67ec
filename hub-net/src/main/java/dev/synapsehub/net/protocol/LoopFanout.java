package dev.synapsehub.net.protocol;

import dev.synapsehub.net.session.Session;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOutboundInvoker;
import io.netty.channel.EventLoop;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;
import java.util.function.Predicate;

/**
 * One event loop's share of broadcast delivery. Broadcast batches (already encoded WebSocket
 * frames) queue here in commit order; a drain pass walks the loop's members and hands each one
 * everything it has not been given yet in a single flush, yielding to the loop's I/O every
 * 128 members or 512 batch writes, whichever comes first. A batch's requesters are served at
 * once; the others after a short linger, so that the agent that caused a broadcast does not
 * wait for ten thousand others to get it, and
 * its next exchange (a claim's release, say) usually joins the same pass: one write per socket
 * instead of two. Every frame for a member (broadcast or private) is written on this loop after
 * the member has been caught up, so each connection still sees frames in commit order.
 *
 * <p>A pass is followed by a pause as long as the pass was (at most {@link #MAX_PAUSE_NANOS})
 * before the next one starts, so the fan-out takes at most about half of the loop's time and
 * the requests on its connections get the rest. With ten thousand members a pass takes tens of
 * milliseconds, so the pause also lets the batches of the following claim cycles join the next
 * pass: fewer writes per socket, which is what a broadcast costs (the kernel's send, one per
 * socket per pass). A small loop's passes are short, and so are its pauses.
 *
 * <p>Members are on one of two rosters. A loud member takes every batch; a quiet one (scoped
 * delivery, see {@code docs/protocol.md}) takes only the batches meant for every socket, and
 * gets the claim traffic meant for it as private frames. A pass visits the quiet roster only
 * when a batch for every socket is waiting for it, so claim traffic costs nothing per quiet
 * member. Confined to its event loop.
 */
final class LoopFanout {
    /** Member visits per task before the loop gets to read and write sockets again. */
    private static final int VISITS_PER_TASK = 128;

    /**
     * Batch writes per task, however few members that is: a member owed many batches (a pass
     * behind a backlog, or a long linger) costs one write per batch, so a task bounded only in
     * members held the loop for 128 times that, and a requester's batch (served at once in
     * {@link #accept}) and its next request waited behind it: at a 250 ms linger after a flat-out
     * warm-up, tasks of ~100 ms (128 members owed ~300 batches each) put the claimant's
     * replies 0.5-2 s late. Checked between members (a member's own backlog is written whole in
     * one visit), so a task ends after the member that reaches the bound: about 512 writes plus
     * one member's backlog, and at least one member per task, so every pass still progresses.
     */
    static final int WRITES_PER_TASK = 512;

    /** The longest pause after a pass, however long the pass took: bounds what observers wait. */
    static final long MAX_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    /** {@link #oldestPublishedAt()} when no batch waits. */
    static final long NONE_PENDING = Long.MAX_VALUE;

    /**
     * A batch; its own indices never move (members are written bounded slices of it).
     *
     * @param universal for every member; otherwise for the loud roster only
     */
    private record Pending(long seq, ByteBuf frames, long publishedAt, BacklogShare backlog, boolean universal) {
    }

    /** The members of one roster, and how far the current pass has got through them. */
    private static final class Roster {
        final List<Session> members = new ArrayList<>();
        /** Members before this index were visited in the current pass. */
        int next;
        /** The lowest seq every member visited in this pass has been given. */
        long passFloor = Long.MAX_VALUE;

        boolean contains(Session s) {
            int i = s.fanoutIndex();
            return i >= 0 && i < members.size() && members.get(i) == s;
        }

        void add(Session s) {
            s.fanoutIndex(members.size());
            members.add(s);
        }

        /** Removes a member, keeping the current pass's visited members before {@link #next}. */
        void remove(Session s) {
            int i = s.fanoutIndex();
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
        }

        void endPass() {
            next = 0;
            passFloor = Long.MAX_VALUE;
        }

        private void move(int from, int to) {
            Session s = members.get(from);
            members.set(to, s);
            s.fanoutIndex(to);
        }
    }

    private final EventLoop loop;
    private final long lingerNanos;
    private final Predicate<Session> deliverable;
    private final Predicate<Session> deliverableWhileClosing;
    private final AtomicLong backlogBytes;
    private final LongConsumer fanoutDelay;
    private final LongSupplier clock;
    private final Roster loud = new Roster();
    private final Roster quiet = new Roster();
    /** Undelivered batches, seqs consecutive, oldest first. */
    private final List<Pending> pending = new ArrayList<>();
    /**
     * Per member the hub is closing: the batches it was owed when a pass (or its reply's batch)
     * reached it, each a share held until its close writes them, before the close frame
     * ({@link #finish}). Held here rather than in {@link #pending}, so that a close waiting behind
     * the connection's earlier answers holds back no batch from the other members' release (nor
     * makes the loop look behind to admission).
     */
    private final Map<Session, Held> heldForClose = new HashMap<>();
    /** Whether what is held for a closing member is more than it may hold (it is then dropped). */
    private final HeldLimit heldLimit;

    /** Decides when the batches held for a member's close are too many bytes to keep. */
    @FunctionalInterface
    interface HeldLimit {
        /** True when {@code member} holding {@code heldBytes} is over its limit (the callee closes it). */
        boolean exceeded(Session member, long heldBytes);
    }

    /** The batch shares held for one closing member, and their bytes. */
    private static final class Held {
        final List<ByteBuf> shares = new ArrayList<>();
        long bytes;
    }
    /**
     * When the oldest batch in {@link #pending} was published ({@link System#nanoTime()}), or
     * {@link #NONE_PENDING}: written on this loop, read by admission on any thread, so that a
     * backlog small in bytes but long in time (a batch costs one write per member) answers busy.
     */
    private volatile long oldestPublishedAt = NONE_PENDING;
    /**
     * Publication times of the batches handed to this loop ({@link #handOver}) whose accept has
     * not run yet, oldest first: a loop stuck in a long task has them in its task queue, not in
     * {@link #pending}, and they wait all the same. Guarded by itself (the outbox thread adds,
     * this loop removes, admission reads).
     */
    private final ArrayDeque<HandedOver> handedOver = new ArrayDeque<>();
    /** The batches in {@link #handedOver} for every member (guarded by {@link #handedOver}). */
    private int handedOverUniversal;
    /** The batches in {@link #pending} for every member (the others are for loud members only). */
    private int pendingUniversal;
    /**
     * The writes this loop owes: each pending batch once per member it is for (members a pass
     * has already given it still count until the pass ends: an upper bound). Written on this
     * loop, read by admission on any thread: a batch of a few hundred bytes costs one write per
     * socket, so this, not the bytes, is the work a backlog stands for.
     */
    private volatile long writesOwed;
    /** Members on either roster, for the writes a handed-over batch for every member will cost (any thread). */
    private volatile int members;
    /** Loud members, for the writes a handed-over batch for loud members only will cost (any thread). */
    private volatile int loudMembers;
    private final Runnable drainTask = this::drain;
    private long newest;
    /** The seq of the newest batch for every member. */
    private long newestUniversal;
    /** Every quiet member has been given every batch for every member up to this seq. */
    private long quietDone;
    private boolean draining;
    /** When the current pass started ({@link #clock}); meaningful while {@link #inPass}. */
    private long passStartedAt;
    private boolean inPass;
    /** No pass starts before this time ({@link #clock}): the pause after the last one. */
    private long nextPassAt;

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
        this(loop, lingerNanos, deliverable, deliverableWhileClosing, backlogBytes, fanoutDelay, System::nanoTime);
    }

    /** As above, timing passes (and their pauses) with {@code clock} instead of {@link System#nanoTime()}. */
    LoopFanout(EventLoop loop, long lingerNanos, Predicate<Session> deliverable,
               Predicate<Session> deliverableWhileClosing, AtomicLong backlogBytes, LongConsumer fanoutDelay,
               LongSupplier clock) {
        this(loop, lingerNanos, deliverable, deliverableWhileClosing, backlogBytes, fanoutDelay, clock,
                (member, heldBytes) -> false);
    }

    /**
     * As above; {@code heldLimit} is asked each time batches are held for a closing member's
     * close: when it answers true (it closes the member, as for a slow reader), they are dropped.
     */
    LoopFanout(EventLoop loop, long lingerNanos, Predicate<Session> deliverable,
               Predicate<Session> deliverableWhileClosing, AtomicLong backlogBytes, LongConsumer fanoutDelay,
               LongSupplier clock, HeldLimit heldLimit) {
        this.heldLimit = heldLimit;
        this.clock = clock;
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

    /** Adds a loud member: it receives batches accepted from now on. */
    void join(Session s) {
        join(s, false);
    }

    /** Adds a member to the quiet or the loud roster: it receives batches accepted from now on. */
    void join(Session s, boolean quietMember) {
        s.fanoutDelivered(newest);
        s.fanoutQuiet(quietMember);
        (quietMember ? quiet : loud).add(s);
        recountWritesOwed();
    }

    /** Removes a member. */
    void leave(Session s) {
        releaseHeld(s);
        if (!isMember(s)) {
            return;
        }
        rosterOf(s).remove(s);
        if (loud.members.isEmpty() && quiet.members.isEmpty()) {
            releaseUpTo(newest, newest, false);
        }
        recountWritesOwed();
    }

    /**
     * Moves a member to the quiet or the loud roster: it first gets what it is owed under its
     * old one, so it sees every frame once, in order, across the switch.
     */
    void quiet(Session s, boolean quietMember) {
        if (!isMember(s)) {
            s.fanoutQuiet(quietMember); // not (or no longer) a member: only remembered
            return;
        }
        if (s.fanoutQuiet() == quietMember) {
            return;
        }
        catchUp(s, deliverable);
        rosterOf(s).remove(s);
        join(s, quietMember);
    }

    /** {@link #accept(ByteBuf, List, long, BacklogShare)} of a batch published now, for this loop alone. */
    void accept(ByteBuf frames, List<Session> origins) {
        accept(frames, origins, System.nanoTime(), new BacklogShare(backlogBytes, frames.readableBytes(), 1));
    }

    /** {@link #accept(ByteBuf, List, long, BacklogShare, boolean)} of a batch for every member. */
    void accept(ByteBuf frames, List<Session> origins, long publishedAt, BacklogShare backlog) {
        accept(frames, origins, publishedAt, backlog, true);
    }

    /**
     * Queues one batch (takes over one reference to {@code frames}) published at
     * {@code publishedAt} ({@link System#nanoTime()}), whose bytes {@code backlog} counts until
     * this loop releases it, and serves the requesters among this loop's members at once.
     * {@code universal}: for every member; otherwise for loud members only.
     */
    void accept(ByteBuf frames, List<Session> origins, long publishedAt, BacklogShare backlog, boolean universal) {
        newest++;
        if (loud.members.isEmpty() && quiet.members.isEmpty()) {
            frames.release();
            backlog.release();
            return;
        }
        pending.add(new Pending(newest, frames, publishedAt, backlog, universal));
        if (pending.size() == 1) {
            oldestPublishedAt = publishedAt;
        }
        if (universal) {
            newestUniversal = newest;
            pendingUniversal++;
        }
        recountWritesOwed();
        try {
            for (Session origin : origins) {
                if (isMember(origin)) {
                    catchUp(origin, deliverable);
                }
            }
        } finally { // even if serving a requester failed: else the batch would wait with no pass to come
            if (!draining) {
                // Not now: after the linger (and at least the loop's next I/O pass), so that
                // batches arriving meanwhile go out to each member in the same write (the
                // requesters already have theirs); and not before the last pass's pause is over.
                draining = true;
                loop.schedule(drainTask, Math.max(lingerNanos, nextPassAt - clock.getAsLong()), TimeUnit.NANOSECONDS);
            }
        }
    }

    /**
     * A batch published at {@code publishedAt} is about to be queued for this loop (any thread,
     * in the order of the batches): it counts as waiting from now, until
     * {@link #acceptHandedOver} takes it in.
     */
    void handOver(long publishedAt, boolean universal) {
        synchronized (handedOver) {
            handedOver.addLast(new HandedOver(publishedAt, universal));
            if (universal) {
                handedOverUniversal++;
            }
        }
    }

    /** The batch just {@linkplain #handOver handed over} will not come (the loop refused the task). */
    void handOverRefused() {
        synchronized (handedOver) {
            forget(handedOver.pollLast());
        }
    }

    /**
     * {@link #accept(ByteBuf, List, long, BacklogShare, boolean)} of a batch {@linkplain #handOver handed over}.
     * The hand-over is forgotten even if the accept fails: a stale entry would make the loop look
     * behind for good and every request be answered busy.
     */
    void acceptHandedOver(ByteBuf frames, List<Session> origins, long publishedAt, BacklogShare backlog,
                          boolean universal) {
        try {
            accept(frames, origins, publishedAt, backlog, universal);
        } finally {
            synchronized (handedOver) { // after: a reader in between sees it in pending instead
                forget(handedOver.pollFirst());
            }
        }
    }

    /** Drops a hand-over's share of {@link #handedOverUniversal} (held: {@link #handedOver}). */
    private void forget(HandedOver gone) {
        if (gone != null && gone.universal()) {
            handedOverUniversal--;
        }
    }

    /** Marks every batch queued so far as not for {@code s}: it was outside the audience then. */
    void skipQueued(Session s) {
        if (isMember(s)) {
            s.fanoutDelivered(newest);
        }
    }

    /**
     * Writes to {@code s} every queued batch it has not been given, in order, before a private
     * frame: also to a member the hub is closing, as the private frame itself goes out before the
     * close (an answer to an earlier request), and must not overtake the broadcasts before it.
     */
    void catchUp(Session s) {
        writeHeld(s);
        catchUp(s, deliverableWhileClosing);
    }

    /**
     * The hub is closing {@code s}: it gets what was broadcast before the close (its last
     * frames follow), then leaves.
     */
    void finish(Session s) {
        writeHeld(s);
        catchUp(s, deliverableWhileClosing);
        leave(s);
    }

    /**
     * As {@link #catchUp(Session)} when {@code mayWrite} allows it; returns the batches written.
     * A batch counts as given to {@code s} once written, held for its close (a member the hub is
     * closing: {@code deliverableWhileClosing} still holds), or when {@code s} may never be written
     * it (closed, dropped, or not yet authenticated, which skips what came before it anyway).
     */
    private int catchUp(Session s, Predicate<Session> mayWrite) {
        long delivered = s.fanoutDelivered();
        if (delivered >= newest || !isMember(s)) {
            return 0;
        }
        if (pending.isEmpty()) {
            s.fanoutDelivered(newest); // released: each was given to it, or was not for it
            return 0;
        }
        if (!mayWrite.test(s)) {
            if (mayWrite == deliverable && deliverableWhileClosing.test(s)) { // being closed: its close writes them
                holdForClose(s, delivered);
            }
            s.fanoutDelivered(newest);
            return 0;
        }
        s.fanoutDelivered(newest);
        boolean quietMember = s.fanoutQuiet();
        Channel channel = s.channel();
        // the batch is encoded frames: it enters the pipeline at the WebSocket encoder (only TLS
        // and the socket are nearer), not at the tail, saving a walk of every handler per member
        ChannelOutboundInvoker out = s.batchWriter();
        // a quiet member's mark may lag behind batches released without it: they were not for it
        int from = (int) Math.max(0, delivered + 1 - pending.get(0).seq());
        // held back one batch, so that the last one goes out with the flush in one pipeline call
        ByteBuf held = null;
        int written = 0;
        for (int k = from; k < pending.size(); k++) {
            Pending batch = pending.get(k);
            if (quietMember && !batch.universal()) {
                continue;
            }
            if (held != null) {
                out.write(held, channel.voidPromise());
                written++;
                held = null;
                // asked again before each further batch: the hard cap counts what this pass has
                // queued already, so a slow reader is dropped at most one batch past it
                if (!mayWrite.test(s)) {
                    out.flush();
                    return written;
                }
            }
            held = share(batch.frames());
        }
        if (held != null) {
            out.writeAndFlush(held, channel.voidPromise());
            written++;
        }
        return written;
    }

    /** Holds for {@code s}'s close a share of every queued batch after {@code delivered} that is for it. */
    private void holdForClose(Session s, long delivered) {
        Held held = heldForClose.computeIfAbsent(s, k -> new Held());
        boolean quietMember = s.fanoutQuiet();
        for (int k = (int) Math.max(0, delivered + 1 - pending.get(0).seq()); k < pending.size(); k++) {
            Pending batch = pending.get(k);
            if (!quietMember || batch.universal()) {
                ByteBuf share = share(batch.frames());
                held.shares.add(share);
                held.bytes += share.readableBytes();
            }
        }
        // a close that waits long behind slow answers must not hold broadcasts without bound
        if (heldLimit.exceeded(s, held.bytes)) {
            releaseHeld(s);
        }
    }

    /** Writes what was held for {@code s}'s close, in order, unless it can no longer be written (released then). */
    private void writeHeld(Session s) {
        Held h = heldForClose.remove(s);
        if (h == null) {
            return;
        }
        List<ByteBuf> held = h.shares;
        int k = 0;
        try {
            if (deliverableWhileClosing.test(s)) {
                Channel channel = s.channel();
                ChannelOutboundInvoker out = s.batchWriter();
                for (; k < held.size(); k++) {
                    out.write(held.get(k), channel.voidPromise()); // the pipeline owns it now
                }
                out.flush();
            }
        } finally {
            for (; k < held.size(); k++) {
                held.get(k).release();
            }
        }
    }

    /** Releases what was held for {@code s}'s close (it left without one). */
    private void releaseHeld(Session s) {
        Held held = heldForClose.remove(s);
        if (held != null) {
            held.shares.forEach(ByteBuf::release);
        }
    }

    /**
     * One member's view of a shared batch: its own read position (the socket's partial writes
     * move it) on the batch's bytes, holding one reference to the batch until the socket
     * releases it. A plain slice, not a pooled {@code retainedDuplicate()}: that costs a
     * recycled object and a second reference count per member, ten thousand times per broadcast
     * at 10,000 agents. And bounded to the batch's bytes: TLS's write queue appends a member's
     * next buffer into this one in place when it has room or can grow, and a duplicate's room
     * is the shared batch's spare capacity (a growth would even reallocate the batch under the
     * other loops' members).
     */
    private static ByteBuf share(ByteBuf frames) {
        return frames.retain().slice();
    }

    /** Gives every member what it has not had yet, now, and releases every batch (shutdown). */
    void deliverAll() {
        for (Session member : new ArrayList<>(loud.members)) {
            catchUp(member, deliverable);
        }
        for (Session member : new ArrayList<>(quiet.members)) {
            catchUp(member, deliverable);
        }
        releaseUpTo(newest, newest, true);
    }

    /**
     * When the oldest batch still waiting for one of this loop's members was published
     * ({@link System#nanoTime()}), or {@link #NONE_PENDING}; from any thread.
     */
    long oldestPublishedAt() {
        long queued = oldestPublishedAt;
        if (queued != NONE_PENDING) {
            return queued; // older than any batch still handed over
        }
        synchronized (handedOver) {
            HandedOver first = handedOver.peekFirst();
            return first == null ? NONE_PENDING : first.publishedAt();
        }
    }

    /**
     * The writes this loop owes its members for the batches waiting, handed over or accepted (an
     * upper bound: during a pass the members it has visited still count, and so do members that
     * joined after a batch and owe none of it, until the batch is released); from any thread.
     */
    long writesOwed() {
        int handed;
        int handedUniversal;
        synchronized (handedOver) {
            handed = handedOver.size();
            handedUniversal = handedOverUniversal;
        }
        return writesOwed + handedUniversal * (long) members + (handed - handedUniversal) * (long) loudMembers;
    }

    /** Batches waiting for at least one member (for tests and metrics). */
    int pendingBatches() {
        return pending.size();
    }

    int memberCount() {
        return loud.members.size() + quiet.members.size();
    }

    /** Members on the quiet roster (for tests). */
    int quietCount() {
        return quiet.members.size();
    }

    private void drain() {
        int visits = 0;
        int writes = 0;
        if (!inPass) {
            inPass = true;
            passStartedAt = clock.getAsLong();
        }
        while (true) {
            Roster roster;
            if (loud.next < loud.members.size()) {
                roster = loud;
            } else if (newestUniversal > quietDone && quiet.next < quiet.members.size()) {
                roster = quiet; // only when a batch for every member waits for the quiet ones
            } else {
                endPass();
                long now = clock.getAsLong();
                long pause = Math.min(Math.max(0, now - passStartedAt), MAX_PAUSE_NANOS);
                nextPassAt = now + pause;
                if (pending.isEmpty()) {
                    inPass = false;
                    draining = false;
                    return;
                }
                long wait = Math.max(lingerNanos, pause);
                if (wait > 0) {
                    // batches that came during the pass: the members visited before them wait
                    // a linger (and the pause) too, for more company
                    inPass = false;
                    loop.schedule(drainTask, wait, TimeUnit.NANOSECONDS);
                    return;
                }
                passStartedAt = now;
                continue;
            }
            Session member = roster.members.get(roster.next++);
            writes += catchUp(member, deliverable);
            roster.passFloor = Math.min(roster.passFloor, member.fanoutDelivered());
            if (++visits >= VISITS_PER_TASK || writes >= WRITES_PER_TASK) {
                // A scheduled task runs only after the loop's next I/O pass; a re-queued one
                // could run straight away, up to 64 times in a row, starving reads.
                loop.schedule(drainTask, 0, TimeUnit.NANOSECONDS);
                return;
            }
        }
    }

    /** Every member due in this pass was visited: releases what all of them have been given. */
    private void endPass() {
        long loudFloor = loud.members.isEmpty() ? newest : loud.passFloor;
        long quietFloor;
        if (quiet.members.isEmpty()) {
            quietFloor = newest;
        } else if (quiet.next > 0) {
            quietFloor = quiet.passFloor; // the quiet roster was visited in this pass
        } else {
            quietFloor = quietDone; // not due: nothing for every member is newer than this
        }
        quietDone = Math.max(quietDone, Math.min(quietFloor, newest));
        boolean anyone = !loud.members.isEmpty() || !quiet.members.isEmpty();
        releaseUpTo(anyone ? loudFloor : newest, anyone ? quietFloor : newest, anyone);
        loud.endPass();
        quiet.endPass();
    }

    private Roster rosterOf(Session s) {
        return s.fanoutQuiet() ? quiet : loud;
    }

    private boolean isMember(Session s) {
        return rosterOf(s).contains(s);
    }

    /**
     * Releases the batches up to {@code loudSeq} that are, when for every member, also within
     * {@code quietSeq}; {@code delivered}: every member was handed them.
     */
    private void releaseUpTo(long loudSeq, long quietSeq, boolean delivered) {
        int n = 0;
        long now = delivered ? System.nanoTime() : 0;
        while (n < pending.size()) {
            Pending batch = pending.get(n);
            if (batch.seq() > loudSeq || (batch.universal() && batch.seq() > quietSeq)) {
                break;
            }
            if (delivered) {
                fanoutDelay.accept(now - batch.publishedAt());
            }
            batch.frames().release();
            batch.backlog().release();
            if (batch.universal()) {
                pendingUniversal--;
            }
            n++;
        }
        pending.subList(0, n).clear();
        oldestPublishedAt = pending.isEmpty() ? NONE_PENDING : pending.get(0).publishedAt();
        recountWritesOwed();
    }

    /** Republishes {@link #writesOwed} and {@link #members} after the batches or the rosters changed. */
    private void recountWritesOwed() {
        int all = loud.members.size() + quiet.members.size();
        members = all;
        loudMembers = loud.members.size();
        long loudOnly = pending.size() - pendingUniversal;
        writesOwed = pendingUniversal * (long) all + loudOnly * loud.members.size();
    }

    /** A batch handed over to this loop and not yet taken in: when it was published, and for whom. */
    private record HandedOver(long publishedAt, boolean universal) {
    }
}
