package dev.synapsehub.journal;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Where a start-up's time goes: each step's wall time, the CPU of the thread doing the start-up,
 * and the CPU of the whole process (JIT compilers, GC and helper threads included), for the
 * hub's start-up log line. Steps are closed by {@link #mark}, each from the previous mark.
 * One thread marks (the one starting the hub).
 */
public final class StartupPhases {
    /** One closed step. */
    public record Phase(String name, long wallNanos, long threadCpuNanos, long processCpuNanos) {
    }

    private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    private final List<Phase> phases = new ArrayList<>();
    private long wall;
    private long threadCpu;
    private long processCpu;

    private StartupPhases() {
    }

    /** Starts timing now; nothing before is counted. */
    public static StartupPhases startingNow() {
        StartupPhases p = new StartupPhases();
        p.wall = System.nanoTime();
        p.threadCpu = p.threads.getCurrentThreadCpuTime();
        p.processCpu = processCpuNanos();
        return p;
    }

    /**
     * Starts timing now with a first step {@code name} that covers the JVM's own start up to
     * here: its wall time since the JVM started, and all CPU used so far.
     */
    public static StartupPhases sinceJvmStart(String name) {
        StartupPhases p = new StartupPhases(); // CPU counted from 0: everything so far
        long uptimeNanos = ManagementFactory.getRuntimeMXBean().getUptime() * 1_000_000L;
        p.wall = System.nanoTime() - uptimeNanos;
        p.mark(name);
        return p;
    }

    /** Closes the step {@code name}: what was spent since the previous mark. */
    public void mark(String name) {
        long w = System.nanoTime();
        long t = threads.getCurrentThreadCpuTime();
        long c = processCpuNanos();
        phases.add(new Phase(name, w - wall, t - threadCpu, c < 0 || processCpu < 0 ? -1 : c - processCpu));
        wall = w;
        threadCpu = t;
        processCpu = c;
    }

    /** The steps closed so far, in order. */
    public List<Phase> phases() {
        return List.copyOf(phases);
    }

    /**
     * One line: {@code name wall/thread CPU/process CPU} in ms per step, then the totals.
     */
    public String summary() {
        StringBuilder sb = new StringBuilder("start-up phases (wall / this thread's CPU / process CPU, ms):");
        long w = 0;
        long t = 0;
        long c = 0;
        for (Phase p : phases) {
            sb.append(String.format(Locale.ROOT, " %s %d/%d/%d;", p.name(), p.wallNanos() / 1_000_000,
                    p.threadCpuNanos() / 1_000_000, p.processCpuNanos() / 1_000_000));
            w += p.wallNanos();
            t += p.threadCpuNanos();
            c += p.processCpuNanos();
        }
        return sb.append(String.format(Locale.ROOT, " total %d/%d/%d", w / 1_000_000, t / 1_000_000, c / 1_000_000))
                .toString();
    }

    private static long processCpuNanos() {
        return ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os
                ? os.getProcessCpuTime() : -1;
    }
}
