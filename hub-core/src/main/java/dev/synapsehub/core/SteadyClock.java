package dev.synapsehub.core;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * The hub's clock: Unix seconds measured on the monotonic clock, anchored to the wall clock
 * at start. A step of the wall clock (an NTP correction, a VM resumed, an operator's
 * {@code date -s}) therefore never expires every lease at once or stretches them all: the hub
 * logs each step once and slews toward the wall clock at no more than {@link #MAX_SLEW} (1 %),
 * so a lease measured during the catch-up is at most 1 % short or long, and the hub's
 * timestamps converge on wall time again (a 60 s step in 100 minutes). Never goes backwards.
 * Thread-safe and lock-free; the slew is re-planned at most every {@link #RECHECK_NANOS}.
 */
public final class SteadyClock implements Clock {
    /** The largest rate difference from the monotonic clock while converging on wall time. */
    public static final double MAX_SLEW = 0.01;
    /** A wall clock this far from hub time is reported as a step. */
    public static final double STEP_SECONDS = 1.0;
    /** How often the wall clock is compared and the slew re-planned. */
    static final long RECHECK_NANOS = 1_000_000_000L;

    /** Hub time at {@code nanos} was {@code seconds}, advancing at {@code rate} hub seconds per second. */
    private record Segment(long nanos, double seconds, double rate) {
        double at(long now) {
            return seconds + (now - nanos) / 1e9 * rate;
        }
    }

    private final LongSupplier wallMillis;
    private final LongSupplier monotonicNanos;
    private final Consumer<String> stepLog;
    private volatile Segment segment;
    private final AtomicLong recheckAt;
    private final AtomicLong lastBits = new AtomicLong();
    /** The wall clock's lead over hub time at the last re-plan, and when that was (replan's thread only). */
    private double lastGap;
    private long lastReplanNanos;

    /** A clock over the given wall and monotonic sources; {@code stepLog} hears of each step once. */
    public SteadyClock(LongSupplier wallMillis, LongSupplier monotonicNanos, Consumer<String> stepLog) {
        this.wallMillis = wallMillis;
        this.monotonicNanos = monotonicNanos;
        this.stepLog = stepLog;
        long now = monotonicNanos.getAsLong();
        this.segment = new Segment(now, wallMillis.getAsLong() / 1000.0, 1.0);
        this.recheckAt = new AtomicLong(now + RECHECK_NANOS);
        this.lastReplanNanos = now;
    }

    /** The system's wall and monotonic clocks; steps are logged as warnings. */
    public static SteadyClock system() {
        System.Logger log = System.getLogger(SteadyClock.class.getName());
        return new SteadyClock(System::currentTimeMillis, System::nanoTime,
                message -> log.log(System.Logger.Level.WARNING, message));
    }

    @Override
    public double nowSeconds() {
        long now = monotonicNanos.getAsLong();
        long due = recheckAt.get();
        if (now - due >= 0 && recheckAt.compareAndSet(due, now + RECHECK_NANOS)) {
            replan(now);
        }
        double t = segment.at(now);
        // a reader holding the previous segment can be a hair ahead of one holding the new one
        long bits = lastBits.accumulateAndGet(Double.doubleToRawLongBits(t), Math::max);
        return Double.longBitsToDouble(bits);
    }

    /** The raw wall clock, stepped or not: for signed timestamps, which clients take from their wall clocks. */
    @Override
    public double wallSeconds() {
        return wallMillis.getAsLong() / 1000.0;
    }

    /** Compares with the wall clock and plans the rate until the next check (one thread at a time). */
    private void replan(long now) {
        double hub = segment.at(now);
        double behind = wallMillis.getAsLong() / 1000.0 - hub; // > 0: the wall clock is ahead
        // a step is a change of the gap the slew since the last check cannot explain: each one is
        // reported, also a second step while hub time is still converging after the first
        double expected = lastGap - (segment.rate() - 1.0) * Math.max(0, now - lastReplanNanos) / 1e9;
        double step = behind - expected;
        if (Math.abs(step) >= STEP_SECONDS) {
            stepLog.accept(String.format(java.util.Locale.ROOT, "wall clock stepped %s by %.3f s against the"
                    + " hub's monotonic time; leases keep their real durations and hub time slews toward the"
                    + " wall clock at %.0f %% (about %.0f s to converge)", step > 0 ? "forward" : "back",
                    Math.abs(step), MAX_SLEW * 100, Math.abs(behind) / MAX_SLEW));
        }
        lastGap = behind;
        lastReplanNanos = now;
        double wanted = behind / (RECHECK_NANOS / 1e9); // close the gap within one check, if allowed
        double rate = 1.0 + Math.max(-MAX_SLEW, Math.min(MAX_SLEW, wanted));
        segment = new Segment(now, hub, rate);
    }
}
