package dev.synapsehub.core;

/** The one source of time for the core: Unix seconds as a double, like the wire. */
@FunctionalInterface
public interface Clock {
    /** Current time in Unix seconds. */
    double nowSeconds();

    /**
     * The system clock as the hub keeps time: monotonic, anchored to the wall clock, slewing
     * toward it after a step ({@link SteadyClock}); only composition roots should use it.
     */
    static Clock system() {
        return SteadyClock.system();
    }
}
