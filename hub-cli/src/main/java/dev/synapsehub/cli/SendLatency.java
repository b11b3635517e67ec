package dev.synapsehub.cli;

import java.util.Locale;

/**
 * The latency of one kind of request, stamped twice: from the instant the schedule meant to send
 * it and from the instant it was actually sent. In a paced run a hub that stalls delays the sends
 * that were due during the stall; measured from the actual send those waits vanish (coordinated
 * omission), measured from the intended send they count. In a closed loop both instants are one.
 */
final class SendLatency {
    private final LatencyHistogram fromIntended = new LatencyHistogram();
    private final LatencyHistogram fromActual = new LatencyHistogram();

    /** One answer at {@code answeredAt} to a request meant for {@code intendedAt} and sent at {@code sentAt}. */
    void record(long intendedAt, long sentAt, long answeredAt) {
        // a request is never sent before its time; an intended instant after the send would hide waiting
        long intended = Math.min(intendedAt, sentAt);
        fromIntended.record(answeredAt - intended);
        fromActual.record(answeredAt - sentAt);
    }

    /** Latencies from the intended send instant: the honest figure of a paced run. */
    LatencyHistogram fromIntended() {
        return fromIntended;
    }

    /** Latencies from the actual send instant. */
    LatencyHistogram fromActual() {
        return fromActual;
    }

    long count() {
        return fromIntended.count();
    }

    /** {@code p50 .. p99 .. p99.9 .. max ..} of one histogram. */
    static String percentiles(LatencyHistogram h) {
        return String.format(Locale.ROOT, "p50 %s  p99 %s  p99.9 %s  max %s", BenchCommand.micros(h.quantileNanos(0.5)),
                BenchCommand.micros(h.quantileNanos(0.99)), BenchCommand.micros(h.quantileNanos(0.999)),
                BenchCommand.micros(h.maxNanos()));
    }
}
