package dev.synapsehub.net;

import com.sun.management.OperatingSystemMXBean;
import dev.synapsehub.core.state.StateImage;

import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.Locale;

/**
 * What a long fuzzing run spends per input, printed every {@code -Dfuzz.progress=SECONDS} (off by
 * default): inputs by size (the frame limit is 64 KiB), wall and process CPU per input in each
 * size class over the interval, and how large the hub's state has grown. It says whether a
 * falling rate comes from larger inputs, from the state the run has built up, or from the JVM
 * (the process CPU includes the JIT and GC, and Linux counts it in 10 ms ticks: only an average
 * over many inputs means anything). Nothing here is checked; the output goes to the test's
 * standard error (surefire's {@code -output.txt}).
 */
final class FuzzProgress {
    private static final int[] UPPER = {256, 4096, 65536, Integer.MAX_VALUE};
    private static final String[] CLASSES = {"<=256B", "<=4KiB", "<=64KiB", ">64KiB"};

    private final long periodNanos;
    private final OperatingSystemMXBean os = (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    private final long[] count = new long[UPPER.length];
    private final long[] wall = new long[UPPER.length];
    private final long[] cpu = new long[UPPER.length];
    private long total;
    private long lastPrint = System.nanoTime();
    private long startWall;
    private long startCpu;

    private FuzzProgress(long periodNanos) {
        this.periodNanos = periodNanos;
    }

    /** A recorder printing every {@code fuzz.progress} seconds, or null when the property is not set. */
    static FuzzProgress fromProperty() {
        String seconds = System.getProperty("fuzz.progress");
        return seconds == null || seconds.isBlank() ? null : new FuzzProgress((long) (Double.parseDouble(seconds) * 1e9));
    }

    /** Marks the start of one input. */
    void start() {
        startWall = System.nanoTime();
        startCpu = os.getProcessCpuTime();
    }

    /** Records the input just run; prints a line (reading {@code state} then only) when the period is over. */
    void done(int length, java.util.concurrent.Callable<StateImage> stateNow) throws Exception {
        long now = System.nanoTime();
        int c = 0;
        while (length > UPPER[c]) {
            c++;
        }
        count[c]++;
        wall[c] += now - startWall;
        cpu[c] += os.getProcessCpuTime() - startCpu;
        total++;
        if (now - lastPrint < periodNanos) {
            return;
        }
        StateImage state = stateNow.call();
        StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "fuzz progress: %d inputs, %.0f/s;",
                total, Arrays.stream(count).sum() / ((now - lastPrint) / 1e9)));
        for (int i = 0; i < UPPER.length; i++) {
            if (count[i] > 0) {
                line.append(String.format(Locale.ROOT, " %s %d (wall %d us, cpu %d us)", CLASSES[i], count[i],
                        wall[i] / count[i] / 1000, cpu[i] / count[i] / 1000));
            }
        }
        line.append(String.format(Locale.ROOT, "; state: %d live claims, %d board tasks, %d notes, %d chats, %d dead"
                        + " letters, %d idempotency entries", state.claims().live().size(), state.board().tasks().size(),
                state.board().notes().size(), state.messaging().history().size(),
                state.messaging().deadLetters().size(), state.idempotency().size()));
        System.err.println(line);
        Arrays.fill(count, 0);
        Arrays.fill(wall, 0);
        Arrays.fill(cpu, 0);
        lastPrint = now;
    }
}
