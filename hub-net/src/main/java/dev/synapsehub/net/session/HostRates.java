package dev.synapsehub.net.session;

import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The per-host rate limit ({@code --host-rate}/{@code --host-burst}, contract §4.3 step 3): every
 * frame of every socket from one remote address draws from one token bucket, heartbeats
 * included. The bucket outlives the host's sockets, so reconnecting does not refill it (the
 * per-connection {@code --rate} bucket does refill). Buckets that have refilled to the full
 * burst are forgotten (one that comes back starts full anyway), so the map holds about the hosts
 * seen within the last burst's refill time. Thread-safe.
 *
 * <p>Forgetting runs on the I/O loops, so it is amortised O(1): the buckets wait in a queue in
 * the order they were last looked at, and each new host looks at the {@link #VISITS_PER_NEW_HOST}
 * oldest, forgetting the full ones and sending the others to the back. Every bucket is thus
 * looked at again within a few arrivals per bucket held, and a flood of new addresses pays for
 * its own cleaning in constant work per address, never a walk of the whole table.
 */
public final class HostRates {
    /**
     * Buckets looked at per new host: more than one, so the queue is walked faster than it
     * grows and a full bucket waits at most about {@code hosts / (VISITS_PER_NEW_HOST - 1)} arrivals.
     */
    static final int VISITS_PER_NEW_HOST = 8;

    private final double perSecond;
    private final int burst;
    private final Map<String, Bucket> buckets = new ConcurrentHashMap<>();
    /** Every bucket of {@link #buckets} once, oldest look first. */
    private final Queue<Bucket> order = new ConcurrentLinkedQueue<>();

    /** {@code perSecond} > 0 frames a second per host, {@code burst} ≥ 1 at once. */
    public HostRates(double perSecond, int burst) {
        if (!(perSecond > 0) || !Double.isFinite(perSecond) || burst < 1) {
            throw new IllegalArgumentException("host rate " + perSecond + " burst " + burst);
        }
        this.perSecond = perSecond;
        this.burst = burst;
    }

    /** True when a frame from {@code host} may pass at {@code nowNanos} (it takes a token). */
    public boolean take(String host, long nowNanos) {
        while (true) {
            Bucket b = buckets.get(host);
            boolean fresh = false;
            if (b == null) {
                Bucket made = new Bucket(host, burst, nowNanos);
                b = buckets.putIfAbsent(host, made);
                if (b == null) {
                    b = made;
                    fresh = true;
                }
            }
            Boolean taken = b.take(perSecond, burst, nowNanos);
            if (taken == null) {
                // Forgotten between the look-up and the take: the host's next bucket counts it. Its
                // forgetter may not have removed it yet; removing it here keeps the next look-up
                // from finding it again (and this I/O loop from spinning until that thread runs).
                buckets.remove(host, b);
                continue;
            }
            if (fresh) { // after the take: this one is not full, so it goes to the back as it should
                order.add(b);
                forgetSome(nowNanos);
            }
            return taken;
        }
    }

    /** Hosts with a bucket now. */
    public int hosts() {
        return buckets.size();
    }

    /**
     * Marks {@code host}'s bucket forgotten without removing it, as {@link #forgetSome} leaves it
     * when its thread is preempted between the two: tests stand in for that thread with it.
     */
    void markForgotten(String host) {
        Bucket b = buckets.get(host);
        if (b != null) {
            b.markForgotten();
        }
    }

    /** Looks at the oldest few buckets: forgets the full ones, sends the others to the back. */
    private void forgetSome(long nowNanos) {
        for (int i = 0; i < VISITS_PER_NEW_HOST; i++) {
            Bucket b = order.poll();
            if (b == null) {
                return;
            }
            if (b.forgetIfFull(perSecond, burst, nowNanos)) {
                buckets.remove(b.host, b);
            } else {
                order.add(b);
            }
        }
    }

    private static final class Bucket {
        private final String host;
        private double tokens;
        private long refilledNanos;
        /** Set once the bucket is being forgotten: a take then goes to the host's next bucket. */
        private boolean forgotten;

        Bucket(String host, int burst, long nowNanos) {
            this.host = host;
            tokens = burst;
            refilledNanos = nowNanos;
        }

        /** Whether a token was taken; null when this bucket is forgotten. */
        synchronized Boolean take(double perSecond, int burst, long nowNanos) {
            if (forgotten) {
                return null;
            }
            refill(perSecond, burst, nowNanos);
            if (tokens < 1.0) {
                return false;
            }
            tokens -= 1.0;
            return true;
        }

        synchronized boolean forgetIfFull(double perSecond, int burst, long nowNanos) {
            refill(perSecond, burst, nowNanos);
            forgotten = tokens >= burst;
            return forgotten;
        }

        synchronized void markForgotten() {
            forgotten = true;
        }

        private void refill(double perSecond, int burst, long nowNanos) {
            double elapsed = Math.max(0, nowNanos - refilledNanos) / 1e9;
            refilledNanos = Math.max(refilledNanos, nowNanos);
            tokens = Math.min(burst, tokens + elapsed * perSecond);
        }
    }
}
