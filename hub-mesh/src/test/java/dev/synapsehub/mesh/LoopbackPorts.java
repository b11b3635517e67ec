package dev.synapsehub.mesh;

import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

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

    /**
     * Where this JVM's walk through its slice starts (random, so that JVMs run one after another
     * do not start on the same port) and how far it has gone.
     */
    private static final int START = ThreadLocalRandom.current().nextInt(HIGH - LOW);
    private static final AtomicInteger NEXT = new AtomicInteger();

    /**
     * The next port of this JVM's slice; the caller still binds it to see that it is free. Ports
     * are handed out in turn, not drawn at random: a test that picks three ports for a mesh before
     * binding any of them got the same one twice now and then (two nodes on one Raft port, and
     * Ratis exiting the JVM), which a walk cannot do until it has gone round the slice.
     */
    public static int candidate() {
        int[] slice = slice(System.getProperty("loopback.ports.fork"), System.getProperty("loopback.ports.forks"));
        int width = slice[1] - slice[0];
        return slice[0] + Math.floorMod(START + NEXT.getAndIncrement(), width);
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
