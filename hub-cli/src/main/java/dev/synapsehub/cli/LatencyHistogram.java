package dev.synapsehub.cli;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * A latency histogram of the load tool, in nanoseconds: HdrHistogram with three significant
 * digits, so a reported value is within 0.1 % of a recorded one. Any thread records without
 * waiting (an HdrHistogram {@link Recorder}); a read folds what was recorded since the last read
 * into one accumulated histogram, so progress lines can read while event loops record.
 */
final class LatencyHistogram {
    /** Significant decimal digits kept per value. */
    static final int DIGITS = 3;

    private final Recorder recorder = new Recorder(DIGITS);
    private final Histogram total = new Histogram(DIGITS);
    /** The interval histogram handed back to the recorder, so folding allocates nothing in steady state. */
    private Histogram spare;

    /** Records one latency; a negative one (clocks never run back, so a bug) counts as 0. */
    void record(long nanos) {
        recorder.recordValue(Math.max(0, nanos));
    }

    long count() {
        return folded().getTotalCount();
    }

    /** The largest recorded value, within the histogram's precision; 0 when empty. */
    long maxNanos() {
        Histogram h = folded();
        return h.getTotalCount() == 0 ? 0 : h.getMaxValue();
    }

    /** The value at quantile {@code q} (0..1), in nanoseconds; 0 when empty. */
    long quantileNanos(double q) {
        Histogram h = folded();
        return h.getTotalCount() == 0 ? 0 : h.getValueAtPercentile(q * 100);
    }

    private synchronized Histogram folded() {
        spare = recorder.getIntervalHistogram(spare);
        total.add(spare);
        return total;
    }
}
