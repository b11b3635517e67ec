package dev.synapsehub.net.auth;

import java.time.Duration;

/**
 * The throttle of failed authentication attempts per remote host ({@code --auth-fail-limit} and
 * its companions; docs/operations.md): after {@code failures} failed attempts from one host
 * within {@code window}, that host's attempts are refused unchecked for {@code backoff}, doubled
 * at each further episode up to {@code maxBackoff}.
 *
 * @param failures failed attempts within the window that start a back-off; 0 turns the throttle off
 * @param window how far back failures count
 * @param backoff the first back-off of a host
 * @param maxBackoff the longest back-off; a host quiet for this long after its back-off starts
 *        afresh (its back-off is back to {@code backoff})
 * @param hosts hosts tracked at most; beyond, the oldest quiet one (else the oldest) is forgotten
 * @param loopback whether loopback addresses are throttled too (off by default: local tools and
 *        tests connect from there, and behind a local proxy every client would share one state)
 */
public record AuthThrottleSettings(int failures, Duration window, Duration backoff, Duration maxBackoff, int hosts,
        boolean loopback) {
    /** The defaults: 10 failures a minute, 30 s doubling up to 15 min, 10,000 hosts, loopback exempt. */
    public static final AuthThrottleSettings DEFAULTS = new AuthThrottleSettings(10, Duration.ofSeconds(60),
            Duration.ofSeconds(30), Duration.ofMinutes(15), 10_000, false);

    /** No throttle at all. */
    public static final AuthThrottleSettings OFF = new AuthThrottleSettings(0, Duration.ofSeconds(60),
            Duration.ofSeconds(30), Duration.ofMinutes(15), 10_000, false);

    public AuthThrottleSettings {
        if (failures < 0) {
            throw new IllegalArgumentException("auth failure limit must be >= 0 (0: off): " + failures);
        }
        if (window == null || window.isNegative() || window.isZero()) {
            throw new IllegalArgumentException("auth failure window must be positive: " + window);
        }
        if (backoff == null || backoff.isNegative() || backoff.isZero()) {
            throw new IllegalArgumentException("auth back-off must be positive: " + backoff);
        }
        if (maxBackoff == null || maxBackoff.compareTo(backoff) < 0) {
            throw new IllegalArgumentException("longest auth back-off must be at least the first (" + backoff
                    + "): " + maxBackoff);
        }
        if (hosts < 1) {
            throw new IllegalArgumentException("auth throttle hosts must be at least 1: " + hosts);
        }
    }

    /** Whether failures are counted at all. */
    public boolean enabled() {
        return failures > 0;
    }
}
