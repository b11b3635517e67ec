package dev.synapsehub.federation.route;

import org.slf4j.Logger;

/**
 * At most {@code lines} log lines per window of hub time, so a flood (of refusals, of dropped
 * reports) costs the thread that hits it a counter, not a log write each; the first line of the
 * next window says how many were left out. Thread-safe.
 */
final class LogBudget {
    private final Logger log;
    private final int lines;
    private final double windowSeconds;
    private final String what;
    private double windowStart = Double.NEGATIVE_INFINITY;
    private int logged;
    private long unlogged;

    /** {@code what} names the left-out lines ("dead-letter forwarding refusals"). */
    LogBudget(Logger log, int lines, double windowSeconds, String what) {
        this.log = log;
        this.lines = lines;
        this.windowSeconds = windowSeconds;
        this.what = what;
    }

    /** Logs {@code message} as a warning at {@code now} (hub seconds) if the window has room, else counts it. */
    void warn(double now, String message, Object... args) {
        long quiet;
        synchronized (this) {
            if (now - windowStart >= windowSeconds || now < windowStart) {
                windowStart = now;
                logged = 0;
            }
            if (logged >= lines) {
                unlogged++;
                return;
            }
            logged++;
            quiet = unlogged;
            unlogged = 0;
        }
        if (quiet > 0) {
            log.warn("{} more {} were not logged (at most {} lines per {} s)", quiet, what, lines, (long) windowSeconds);
        }
        log.warn(message, args);
    }
}
