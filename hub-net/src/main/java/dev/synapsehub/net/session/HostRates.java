package dev.synapsehub.net.session;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The per-host rate limit ({@code --host-rate}/{@code --host-burst}, contract §4.3 step 3): every
 * frame of every socket from one remote address draws from one token bucket, heartbeats
 * included. The bucket outlives the host's sockets, so reconnecting does not refill it (the
 * per-connection {@code --rate} bucket does refill). Buckets that have refilled to the full
 * burst are forgotten now and then (one that comes back starts full anyway), so the map holds
 * about the hosts seen within the last burst's refill time. Thread-safe.
 */
public final class HostRates {
    /** How many new hosts between two sweeps of full buckets. */
    private static final int SWEEP_EVERY = 1024;

    private final double perSecond;
    private final int burst;
    private final Map<String, Bucket> buckets = new ConcurrentHashMap<>();
    private final AtomicInteger added = new AtomicInteger();

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
        Bucket b = buckets.get(host);
        boolean fresh = false;
        if (b == null) {
            b = buckets.computeIfAbsent(host, h -> new Bucket(burst, nowNanos));
            fresh = true;
        }
        boolean taken = b.take(perSecond, burst, nowNanos);
        if (fresh && added.incrementAndGet() % SWEEP_EVERY == 0) { // after the take: this one is not full
            sweep(nowNanos);
        }
        return taken;
    }

    /** Hosts with a bucket now. */
    public int hosts() {
        return buckets.size();
    }

    /** Forgets the buckets that are full again at {@code nowNanos}. */
    void sweep(long nowNanos) {
        buckets.values().removeIf(b -> b.fullAt(perSecond, burst, nowNanos));
    }

    private static final class Bucket {
        private double tokens;
        private long refilledNanos;

        Bucket(int burst, long nowNanos) {
            tokens = burst;
            refilledNanos = nowNanos;
        }

        synchronized boolean take(double perSecond, int burst, long nowNanos) {
            refill(perSecond, burst, nowNanos);
            if (tokens < 1.0) {
                return false;
            }
            tokens -= 1.0;
            return true;
        }

        synchronized boolean fullAt(double perSecond, int burst, long nowNanos) {
            refill(perSecond, burst, nowNanos);
            return tokens >= burst;
        }

        private void refill(double perSecond, int burst, long nowNanos) {
            double elapsed = Math.max(0, nowNanos - refilledNanos) / 1e9;
            refilledNanos = Math.max(refilledNanos, nowNanos);
            tokens = Math.min(burst, tokens + elapsed * perSecond);
        }
    }
}
