package dev.synapsehub.cli;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * A fixed-size, lock-free latency histogram: 64 sub-buckets per power of two of nanoseconds,
 * so any recorded value is reported within about 1.6 %. Memory is constant however long a
 * run lasts.
 */
final class LatencyHistogram {
    private static final int SUB = 64;
    private static final int SUB_BITS = 6;
    private final AtomicLongArray counts = new AtomicLongArray(64 * SUB);
    private final java.util.concurrent.atomic.AtomicLong max = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong total = new java.util.concurrent.atomic.AtomicLong();

    void record(long nanos) {
        long v = Math.max(1, nanos);
        counts.incrementAndGet(index(v));
        total.incrementAndGet();
        max.accumulateAndGet(v, Math::max);
    }

    long count() {
        return total.get();
    }

    long maxNanos() {
        return max.get();
    }

    /** The value at quantile {@code q} (0..1), in nanoseconds; 0 when empty. */
    long quantileNanos(double q) {
        long n = total.get();
        if (n == 0) {
            return 0;
        }
        long rank = Math.max(1, (long) Math.ceil(q * n));
        long seen = 0;
        for (int i = 0; i < counts.length(); i++) {
            seen += counts.get(i);
            if (seen >= rank) {
                return Math.min(upperBound(i), max.get());
            }
        }
        return max.get();
    }

    static int index(long v) {
        int magnitude = 63 - Long.numberOfLeadingZeros(v);
        if (magnitude < SUB_BITS) {
            return (int) v;
        }
        int shift = magnitude - SUB_BITS;
        int sub = (int) ((v >>> shift) & (SUB - 1));
        return (magnitude - SUB_BITS + 1) * SUB + sub;
    }

    static long upperBound(int index) {
        if (index < SUB) {
            return index;
        }
        int group = index / SUB;
        int sub = index % SUB;
        int shift = group - 1;
        return (((long) (SUB + sub) + 1) << shift) - 1;
    }
}
