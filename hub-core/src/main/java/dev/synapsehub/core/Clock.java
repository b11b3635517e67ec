package dev.synapsehub.core;

/** The one source of time for the core: Unix seconds as a double, like the wire. */
@FunctionalInterface
public interface Clock {
    /** Current time in Unix seconds. */
    double nowSeconds();

    /** The wall clock; only the daemon's composition root should use it. */
    static Clock system() {
        return () -> System.currentTimeMillis() / 1000.0;
    }
}
