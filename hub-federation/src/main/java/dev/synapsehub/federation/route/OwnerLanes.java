package dev.synapsehub.federation.route;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * Runs the sends to each owner one at a time, in the order they came, on a connector that gives
 * every owner a thread of its own when it has work (a pool that grows). A send blocks while its
 * link connects (up to the connect timeout, then the welcome's): an owner whose host accepts and
 * never answers so holds one thread, and its other sends wait in its lane, never on the threads
 * the sends to other owners need. A send that cannot block (over a connection already open) may
 * run on the caller's thread instead, as its lane's turn, when nothing of that owner's is queued
 * or running ({@link #tryHere}): the connector's hand-over (a thread woken) was a tenth of a
 * forwarded claim's round trip.
 */
final class OwnerLanes {
    private final Executor connector;
    private final Consumer<Runnable> dropped;
    private final Map<String, Lane> lanes = new ConcurrentHashMap<>();

    /**
     * @param dropped answers a send that will never run (the connector refused its lane: closing)
     */
    OwnerLanes(Executor connector, Consumer<Runnable> dropped) {
        this.connector = connector;
        this.dropped = dropped;
    }

    /**
     * Queues {@code send} behind the earlier sends to {@code owner}.
     *
     * @throws RejectedExecutionException when the connector takes no more work (nothing is queued then)
     */
    void execute(String owner, Runnable send) {
        lanes.computeIfAbsent(owner, o -> new Lane()).add(send);
    }

    /**
     * Runs {@code send} on this thread as {@code owner}'s lane's turn when the lane is idle; the
     * sends queued meanwhile run after it, on the connector. False when the lane is busy (nothing
     * was run) or when {@code send} returned false, which it must only do having done nothing
     * (the caller then queues it with {@link #execute}).
     */
    boolean tryHere(String owner, BooleanSupplier send) {
        return lanes.computeIfAbsent(owner, o -> new Lane()).tryHere(send);
    }

    /** Hands every send still queued in a lane to {@code dropped} (the connector closed). */
    void abandonQueued() {
        for (Lane lane : lanes.values()) {
            lane.drain().forEach(dropped);
        }
    }

    /** Whether {@code r} is a lane's turn on the connector (as {@code shutdownNow} returns it). */
    static boolean isLane(Runnable r) {
        return r instanceof Lane;
    }

    /** One owner's sends; on the connector only while it has one to run. */
    private final class Lane implements Runnable {
        private final Deque<Runnable> queue = new ArrayDeque<>();
        private boolean scheduled;

        void add(Runnable send) {
            synchronized (this) {
                queue.addLast(send);
                if (scheduled) {
                    return;
                }
                scheduled = true;
            }
            try {
                connector.execute(this);
            } catch (RejectedExecutionException closing) {
                List<Runnable> left = drain();
                left.remove(send); // the caller answers its own send
                left.forEach(dropped);
                throw closing;
            }
        }

        boolean tryHere(BooleanSupplier send) {
            synchronized (this) {
                if (scheduled) { // a send of this owner's runs or waits: this one goes behind it
                    return false;
                }
                scheduled = true;
            }
            try {
                return send.getAsBoolean();
            } finally {
                turnEnded();
            }
        }

        @Override
        public void run() {
            Runnable next;
            synchronized (this) {
                next = queue.pollFirst();
            }
            try {
                if (next != null) {
                    next.run();
                }
            } finally {
                turnEnded();
            }
        }

        /** Gives the connector the lane's next turn when a send is queued, else marks the lane idle. */
        private void turnEnded() {
            boolean more;
            synchronized (this) {
                more = !queue.isEmpty();
                scheduled = more;
            }
            if (more) { // another turn, behind the other owners' work already queued
                try {
                    connector.execute(this);
                } catch (RejectedExecutionException closing) {
                    drain().forEach(dropped);
                }
            }
        }

        synchronized List<Runnable> drain() {
            List<Runnable> left = new ArrayList<>(queue);
            queue.clear();
            scheduled = false;
            return left;
        }
    }
}
