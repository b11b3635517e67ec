package dev.synapsehub.federation.testing;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Waits on a condition itself (never a fixed sleep in a pass/fail test). */
public final class Await {
    private Await() {
    }

    /** Waits until {@code condition} holds, or fails naming {@code what}. */
    public static void until(String what, Duration timeout, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.sleep(5);
        }
    }
}
