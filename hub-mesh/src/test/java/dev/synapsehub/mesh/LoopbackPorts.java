package dev.synapsehub.mesh;

import java.util.concurrent.ThreadLocalRandom;

/**
 * Candidate ports for loopback test servers: 20000..32000, below the kernel's ephemeral range, cut
 * into one slice per surefire fork ({@code loopback.ports.fork} of {@code loopback.ports.forks}).
 * Forks running side by side then never pick the same port, so a node one fork just stopped (whose
 * peers still redial it) is never answered by another fork's node.
 */
public final class LoopbackPorts {
    static final int LOW = 20_000;
    static final int HIGH = 32_000;

    private LoopbackPorts() {
    }

    /** A random port of this JVM's slice; the caller still binds it to see that it is free. */
    public static int candidate() {
        int[] slice = slice(System.getProperty("loopback.ports.fork"), System.getProperty("loopback.ports.forks"));
        return ThreadLocalRandom.current().nextInt(slice[0], slice[1]);
    }

    /** The range [low, high) of fork {@code fork} (1-based) of {@code forks}; the whole range when unset or odd. */
    static int[] slice(String fork, String forks) {
        int n;
        int k;
        try {
            n = Integer.parseInt(forks);
            k = Integer.parseInt(fork);
        } catch (NumberFormatException | NullPointerException unset) {
            return new int[] {LOW, HIGH};
        }
        if (n < 1 || k < 1 || k > n) {
            return new int[] {LOW, HIGH};
        }
        int width = (HIGH - LOW) / n;
        return new int[] {LOW + (k - 1) * width, LOW + k * width};
    }
}
