package dev.synapsehub.core;

/** The one source of time for the core: Unix seconds as a double, like the wire. */
@FunctionalInterface
public interface Clock {
    /** Current time in Unix seconds. */
    double nowSeconds();

    /**
     * The wall clock as it reads now, Unix seconds, even just after a step: what a signing
     * client's clock reads, so signed timestamps are compared with it (INV-CK-2), never with
     * {@link #nowSeconds()}, which may lag a step for hours. A clock that is its own wall clock
     * (tests, a fixed clock) returns {@link #nowSeconds()}.
     */
    default double wallSeconds() {
        return nowSeconds();
    }

    /**
     * The system clock as the hub keeps time: monotonic, anchored to the wall clock, slewing
     * toward it after a step ({@link SteadyClock}); only composition roots should use it.
     */
    static Clock system() {
        return SteadyClock.system();
    }
}
