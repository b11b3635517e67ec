package dev.synapsehub.net;

/** Stands for any {@link Error} on the writer thread (out of memory, a stack overflow, a linkage error). */
final class InjectedError extends Error {
    private static final long serialVersionUID = 1L;

    InjectedError() {
        super("injected for the test");
    }
}
