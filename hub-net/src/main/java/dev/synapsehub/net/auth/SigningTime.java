package dev.synapsehub.net.auth;

import dev.synapsehub.core.Clock;

/**
 * The two readings a signature check needs (INV-CK-2): {@code wall}, the wall clock that
 * signing clients also read, for the −window / +skew check, and {@code steady}, the hub's
 * monotonic time, for how long a nonce is remembered, so that a step of the wall clock can
 * neither refuse every fresh signature nor shorten a nonce's memory.
 */
public record SigningTime(double wall, double steady) {
    /** Both readings of {@code clock} now. */
    public static SigningTime of(Clock clock) {
        return new SigningTime(clock.wallSeconds(), clock.nowSeconds());
    }

    /** A moment at which the wall clock and hub time agree (no step): tests and fixed clocks. */
    public static SigningTime at(double seconds) {
        return new SigningTime(seconds, seconds);
    }
}
