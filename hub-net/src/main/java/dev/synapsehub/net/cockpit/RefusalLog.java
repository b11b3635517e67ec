package dev.synapsehub.net.cockpit;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Says when a flood of refusals should be logged: the first one, then at most once per interval,
 * with the number refused since the last line. Safe from any thread (the cockpit is served on
 * every I/O loop); a request flood costs a counter, not a log line each.
 */
final class RefusalLog {
    private final long intervalNanos;
    private final AtomicLong unlogged = new AtomicLong();
    private final AtomicLong nextLogAt;

    RefusalLog(long intervalNanos, long now) {
        this.intervalNanos = intervalNanos;
        this.nextLogAt = new AtomicLong(now);
    }

    /**
     * One refusal at {@code now}.
     *
     * @return how many refusals the line to log now covers (this one included), or 0 when none is due
     */
    long refused(long now) {
        unlogged.incrementAndGet();
        long due = nextLogAt.get();
        if (now - due < 0 || !nextLogAt.compareAndSet(due, now + intervalNanos)) {
            return 0;
        }
        return unlogged.getAndSet(0);
    }
}
