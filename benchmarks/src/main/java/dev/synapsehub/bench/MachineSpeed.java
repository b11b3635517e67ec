package dev.synapsehub.bench;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * A fixed CPU workload timed in a fresh JVM, printed beside a series of start-up or catch-up
 * runs so that series taken at different times can be compared: on this project's VM the same
 * code ran 20–50 % slower in some hours than in others (docs/benchmarks.md), with nothing else
 * running. The work is what a hub start and a catch-up do most: hashing, map inserts and
 * lookups of short strings, sorting, and a JIT warming up; it reads and writes no file.
 *
 * <p>usage: {@code java -cp benchmarks.jar dev.synapsehub.bench.MachineSpeed [ROUNDS]} prints one
 * line per round (fixed work, about a second on a quiet machine) and their median; lower is faster.
 */
public final class MachineSpeed {
    private MachineSpeed() {
    }

    public static void main(String[] args) throws NoSuchAlgorithmException {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 3;
        if (rounds < 1 || rounds > 20) {
            throw new IllegalArgumentException("ROUNDS is 1 to 20");
        }
        long fresh = System.nanoTime();
        long sink = work(); // the first round includes the JIT's warm-up, as a start does
        long first = System.nanoTime() - fresh;
        long[] ms = new long[rounds];
        for (int r = 0; r < rounds; r++) {
            long t0 = System.nanoTime();
            sink += work();
            ms[r] = (System.nanoTime() - t0) / 1_000_000;
            System.out.printf("round %d: %d ms%n", r + 1, ms[r]);
        }
        long[] sorted = ms.clone();
        Arrays.sort(sorted);
        System.out.printf("machine speed: first round (cold JIT) %d ms, median round %d ms, %d rounds; load %.2f"
                        + " (checksum %d)%n", first / 1_000_000, sorted[rounds / 2], rounds,
                java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage(), sink & 0xFFFF);
    }

    /** The fixed work of one round; its result only keeps the JIT from dropping it. */
    private static long work() throws NoSuchAlgorithmException {
        long sink = 0;
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        byte[] block = new byte[1 << 20];
        new SplittableRandom(1).nextBytes(block);
        for (int i = 0; i < 48; i++) {
            sha.update(block);
        }
        sink += sha.digest()[0];
        Map<String, Integer> map = new HashMap<>();
        for (int i = 0; i < 400_000; i++) {
            map.put("task-" + i, i);
        }
        for (int i = 0; i < 800_000; i++) {
            Integer v = map.get("task-" + (i % 500_000));
            sink += v == null ? 1 : v;
        }
        long[] numbers = new SplittableRandom(2).longs(2_000_000).toArray();
        Arrays.sort(numbers);
        sink += numbers[numbers.length / 2];
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < 200_000; i++) {
            text.append("{\"type\":\"claim_ok\",\"task_id\":\"t-").append(i).append("\"}");
        }
        sink += Arrays.hashCode(text.toString().getBytes(StandardCharsets.UTF_8));
        return sink;
    }
}
