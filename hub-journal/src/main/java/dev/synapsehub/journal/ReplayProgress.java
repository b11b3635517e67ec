package dev.synapsehub.journal;

import java.util.Locale;

/**
 * Logs the progress of a long replay: events replayed, rate and time left, at most once per
 * interval, so a large journal never looks like a hung start-up.
 */
public final class ReplayProgress {
    private final System.Logger log;
    private final long total;
    private final long intervalNanos;
    private final long start = System.nanoTime();
    private long lastReport = start;

    /**
     * @param total the expected number of rows (an estimate is fine), 0 when unknown
     * @param intervalMillis minimum time between two log lines
     */
    public ReplayProgress(System.Logger log, long total, long intervalMillis) {
        this.log = log;
        this.total = total;
        this.intervalNanos = intervalMillis * 1_000_000L;
    }

    /** Reports {@code done} rows read so far if the interval has passed. Cheap to call often. */
    public void update(long done) {
        long now = System.nanoTime();
        if (now - lastReport < intervalNanos) {
            return;
        }
        lastReport = now;
        log.log(System.Logger.Level.INFO, line(done, now));
    }

    /** The progress line for {@code done} rows at {@code now} (nanoTime). */
    String line(long done, long now) {
        double seconds = Math.max(1e-9, (now - start) / 1e9);
        double rate = done / seconds;
        StringBuilder sb = new StringBuilder("journal replay: ").append(String.format(Locale.ROOT, "%,d", done));
        if (total > 0) {
            double pct = Math.min(100.0, 100.0 * done / total);
            double left = rate > 0 ? Math.max(0, total - done) / rate : Double.NaN;
            sb.append(String.format(Locale.ROOT, " of %,d events (%.0f%%), %,.0f events/s, about %.1f s left",
                    total, pct, rate, left));
        } else {
            sb.append(String.format(Locale.ROOT, " events, %,.0f events/s", rate));
        }
        return sb.toString();
    }

    /** Seconds since the replay started. */
    public double elapsedSeconds() {
        return (System.nanoTime() - start) / 1e9;
    }
}
