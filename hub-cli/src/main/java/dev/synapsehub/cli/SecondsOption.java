package dev.synapsehub.cli;

import java.time.Duration;

/**
 * A number of seconds given to an option, turned once into the whole milliseconds the hub runs
 * on. A value the conversion would change is refused, naming the option and its range: a
 * positive value below 1 ms would become zero (an auth timeout of 0.0004 s closed every
 * connection at once), and a NaN passes every {@code > 0} check.
 */
final class SecondsOption {
    /** The smallest positive value: one millisecond. */
    static final double SMALLEST = 0.001;

    private SecondsOption() {
    }

    /** A positive number of seconds, at least 1 ms, unbounded above. */
    static Duration positive(String option, double seconds) {
        return within(option, seconds, SMALLEST, Double.POSITIVE_INFINITY, null);
    }

    /** 0 (which means {@code zeroMeans}) or a positive number of seconds of at least 1 ms, at most {@code max}. */
    static Duration zeroOrPositive(String option, double seconds, double max, String zeroMeans) {
        return within(option, seconds, SMALLEST, max, zeroMeans);
    }

    /**
     * {@code seconds} as a Duration of whole milliseconds, refused unless within {@code min..max}
     * (or 0 when {@code zeroMeans} says what 0 does).
     */
    static Duration within(String option, double seconds, double min, double max, String zeroMeans) {
        boolean zero = seconds == 0 && zeroMeans != null;
        if (!zero && !(seconds >= min && seconds <= max && Double.isFinite(seconds))) {
            throw new IllegalArgumentException(option + " must be " + range(min, max, zeroMeans) + " (got "
                    + format(seconds) + ")");
        }
        return Duration.ofMillis(Math.round(seconds * 1000));
    }

    private static String range(double min, double max, String zeroMeans) {
        double low = zeroMeans == null ? min : 0;
        String range = Double.isInfinite(max) ? "a number of seconds of at least " + format(low)
                : "a number of seconds within " + format(low) + ".." + format(max);
        return zeroMeans == null ? range : range + " (0: " + zeroMeans + "; else at least " + format(min) + ")";
    }

    private static String format(double seconds) {
        // 0.0004, not 4.0E-4: the operator typed the former
        return Double.isFinite(seconds) ? java.math.BigDecimal.valueOf(seconds).stripTrailingZeros().toPlainString()
                : String.valueOf(seconds);
    }
}
