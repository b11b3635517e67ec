package dev.synapsehub.bench;

import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.ActorMetrics;
import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.Outcome;
import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.claim.ClaimStatus;
import dev.synapsehub.core.claim.RegistryLimits;
import dev.synapsehub.core.command.ClaimCommand;
import dev.synapsehub.core.command.ReleaseCommand;
import dev.synapsehub.core.event.ClaimReleasedEvent;
import dev.synapsehub.core.event.ClaimSnapshotEvent;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.journal.DurableCoordination;
import dev.synapsehub.journal.SqliteJournal;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/**
 * Load driver for the durable journal (issue 3; results in docs/benchmarks.md):
 *
 * <ul>
 *   <li>{@code fsync}: the raw latency of one tiny insert + COMMIT at {@code synchronous=FULL}
 *       in WAL mode on the benchmark directory's disk: the physical limit of one durable commit;</li>
 *   <li>{@code throughput}: durable claim/release events per second through the actor with a
 *       SQLite journal at FULL, for each number of closed-loop submitters, with the mean batch;</li>
 *   <li>{@code replay}: rows per second replayed from journals of the given sizes, decode only and
 *       full rebuild through {@code CoordinationState.apply}.</li>
 * </ul>
 *
 * Usage: {@code java -cp benchmarks/target/benchmarks.jar dev.synapsehub.bench.DurableJournalBench
 * [fsync|throughput|replay|all] [--dir D] [--seconds S] [--submitters 1,16,64,256]
 * [--replay 10000,100000,1000000] [--runs 2] [--pipeline on|off|both] [--fsync-iterations N]}
 * ({@code --pipeline}: replay rows read and decoded on threads of their own while the caller
 * applies, the default, or on the replay thread ({@code off}); {@code both} runs each in turn)
 */
public final class DurableJournalBench {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private DurableJournalBench() {
    }

    /**
     * User-mode CPU time of the actor thread (by name), or -1 when it cannot be measured. User
     * time only: the kernel time of its write/fsync calls depends on the other I/O on the disk.
     */
    private static long actorCpuNanos() {
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().equals("synapse-actor")) {
                return THREADS.getThreadUserTime(t.getId());
            }
        }
        return -1;
    }

    /** CPU time of the whole process (all threads, GC included), or -1. */
    private static long processCpuNanos() {
        java.lang.management.OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        return os instanceof com.sun.management.OperatingSystemMXBean sun ? sun.getProcessCpuTime() : -1;
    }

    /** CPU time (user + system) of the calling thread: the replay loop's own cost, least moved by the load. */
    private static long threadCpuNanos() {
        return ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime();
    }

    /** Load average over the last minute, for the record (machine shared with other builds). */
    private static double load() {
        return ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
    }

    public static void main(String[] args) throws Exception {
        String mode = args.length > 0 && !args[0].startsWith("--") ? args[0] : "all";
        Path dir = Path.of(option(args, "--dir", System.getProperty("java.io.tmpdir")));
        double seconds = Double.parseDouble(option(args, "--seconds", "5"));
        int[] submitters = ints(option(args, "--submitters", "1,16,64,256"));
        int[] replaySizes = ints(option(args, "--replay", "10000,100000,1000000"));
        int fsyncIterations = Integer.parseInt(option(args, "--fsync-iterations", "500"));
        int runs = Integer.parseInt(option(args, "--runs", "2"));
        String pipeline = option(args, "--pipeline", "on");
        Path work = Files.createTempDirectory(dir, "journal-bench-");
        System.out.printf(Locale.ROOT, "# %s, %d CPUs, java %s, dir %s%n", mode,
                Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"), work);
        if (mode.equals("fsync") || mode.equals("all")) {
            rawFsync(work, fsyncIterations);
        }
        if (mode.equals("throughput") || mode.equals("all")) {
            for (int n : submitters) {
                throughput(work, n, seconds);
            }
        }
        if (mode.equals("replay") || mode.equals("all")) {
            for (int n : replaySizes) {
                replay(work, n, runs, pipeline);
            }
        }
    }

    private static String option(String[] args, String name, String fallback) {
        for (int i = 0; i < args.length - 1; i++) {
            if (args[i].equals(name)) {
                return args[i + 1];
            }
        }
        return fallback;
    }

    private static int[] ints(String csv) {
        return Arrays.stream(csv.split(",")).mapToInt(Integer::parseInt).toArray();
    }

    /** One tiny insert and COMMIT per iteration at synchronous=FULL, WAL. */
    static void rawFsync(Path work, int iterations) throws Exception {
        Path db = work.resolve("fsync.db");
        long[] nanos = new long[iterations];
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db); Statement s = c.createStatement()) {
            s.executeQuery("PRAGMA journal_mode=WAL").close();
            s.execute("PRAGMA synchronous=FULL");
            s.execute("CREATE TABLE t(x INTEGER)");
            try (PreparedStatement begin = c.prepareStatement("BEGIN IMMEDIATE");
                 PreparedStatement insert = c.prepareStatement("INSERT INTO t(x) VALUES (?)");
                 PreparedStatement commit = c.prepareStatement("COMMIT")) {
                for (int i = -50; i < iterations; i++) {
                    long t0 = System.nanoTime();
                    begin.executeUpdate();
                    insert.setInt(1, i);
                    insert.executeUpdate();
                    commit.executeUpdate();
                    if (i >= 0) {
                        nanos[i] = System.nanoTime() - t0;
                    }
                }
            }
        }
        long[] sorted = nanos.clone();
        Arrays.sort(sorted);
        double mean = Arrays.stream(nanos).average().orElse(0) / 1000;
        System.out.printf(Locale.ROOT, "raw FULL commit: %d iterations, mean %.0f us, p50 %.0f us, p99 %.0f us"
                        + " -> %.0f commits/s%n", iterations, mean, sorted[iterations / 2] / 1000.0,
                sorted[(int) (iterations * 0.99)] / 1000.0, 1e6 / mean);
    }

    /** Closed-loop submitters, each claiming then releasing its own task, every event FULL. */
    static void throughput(Path work, int submitters, double seconds) throws Exception {
        Path db = work.resolve("throughput-" + submitters + ".db");
        RegistryLimits limits = RegistryLimits.DEFAULTS;
        DurableCoordination hub = DurableCoordination.open(db, Clock.system(),
                () -> new CoordinationState(limits, CoordinationState.DEFAULT_IDEMPOTENCY_CAPACITY),
                ActorSettings.DEFAULTS);
        CoordinationActor actor = hub.actor();
        AtomicBoolean stop = new AtomicBoolean();
        LongAdder granted = new LongAdder();
        LongAdder latencyNanos = new LongAdder();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < submitters; i++) {
            String agent = "agent-" + i;
            String task = "task-" + i;
            Thread t = new Thread(() -> {
                boolean claim = true;
                while (!stop.get()) {
                    Mutation m = claim
                            ? Mutation.of(new ClaimCommand(agent, agent, task, "", null, "wt-" + task, List.of(), null))
                            : Mutation.of(new ReleaseCommand(agent, task, null));
                    long t0 = System.nanoTime();
                    Outcome outcome = actor.submit(m).join();
                    latencyNanos.add(System.nanoTime() - t0);
                    if (outcome instanceof Outcome.Decided d && d.reply().granted()) {
                        granted.increment();
                        claim = !claim;
                    }
                }
            }, "submitter-" + i);
            t.setDaemon(true);
            threads.add(t);
            t.start();
        }
        Thread.sleep(1_000); // warm-up
        ActorMetrics m = actor.metrics();
        long e0 = m.eventsCommitted();
        long b0 = m.batches();
        long c0 = m.commands();
        long g0 = granted.sum();
        long l0 = latencyNanos.sum();
        long cpu0 = actorCpuNanos();
        long t0 = System.nanoTime();
        Thread.sleep((long) (seconds * 1000));
        double elapsed = (System.nanoTime() - t0) / 1e9;
        long actorCpu = actorCpuNanos() - cpu0;
        long events = m.eventsCommitted() - e0;
        long batches = m.batches() - b0;
        long commands = m.commands() - c0;
        long ops = granted.sum() - g0;
        double meanLatencyUs = ops == 0 ? 0 : (latencyNanos.sum() - l0) / 1000.0 / ops;
        stop.set(true);
        for (Thread t : threads) {
            t.join(10_000);
        }
        actor.close();
        System.out.printf(Locale.ROOT, "actor FULL, %3d submitters: %,9.0f durable events/s, %,7.0f commits/s,"
                        + " mean batch %.1f commands, mean latency %.0f us, mean commit %.0f us, slow commits %d;"
                        + " actor thread user CPU %.0f%% = %.1f us/event; load %.1f%n",
                submitters, events / elapsed, batches / elapsed, batches == 0 ? 0 : (double) commands / batches,
                meanLatencyUs, m.meanCommitMicros(), m.slowCommits(), actorCpu / elapsed / 1e7,
                events == 0 ? 0 : actorCpu / 1000.0 / events, load());
    }

    /** Writes {@code n} claim-family events, then replays them: decode only, and full rebuild. */
    static void replay(Path work, int n, int runs, String pipeline) throws Exception {
        Path db = work.resolve("replay-" + n + ".db");
        ClaimLogWriter.write(db, n, "");
        java.util.Map<String, double[]> best = new java.util.LinkedHashMap<>(); // mode -> {decode, rebuild}
        List<String> modes = pipeline.equals("both") ? List.of("off", "on") : List.of(pipeline);
        for (int run = 1; run <= runs; run++) {
            for (String mode : modes) {
                try (SqliteJournal journal = SqliteJournal.open(db)) {
                    journal.replayPipeline(mode.equals("off") ? SqliteJournal.ReplayPipeline.INLINE
                            : SqliteJournal.ReplayPipeline.DEFAULT);
                    long[] count = {0};
                    long c0 = processCpuNanos();
                    long u0 = threadCpuNanos();
                    long t0 = System.nanoTime();
                    journal.replay(e -> count[0]++);
                    double decode = (System.nanoTime() - t0) / 1e9;
                    double decodeCpu = (processCpuNanos() - c0) / 1e9;
                    double decodeThread = (threadCpuNanos() - u0) / 1e3;
                    CoordinationState state = new CoordinationState();
                    long c1 = processCpuNanos();
                    long u1 = threadCpuNanos();
                    long t1 = System.nanoTime();
                    long replayed = state.replay(journal, System.currentTimeMillis() / 1000.0, x -> { });
                    double rebuild = (System.nanoTime() - t1) / 1e9;
                    double rebuildCpu = (processCpuNanos() - c1) / 1e9;
                    double rebuildThread = (threadCpuNanos() - u1) / 1e3;
                    System.out.printf(Locale.ROOT, "replay %,9d events (run %d, pipeline %s): decode only %,10.0f"
                                    + " events/s (%.2f s, process %.2f µs CPU/event, replay thread %.2f µs CPU/event);"
                                    + " full rebuild through apply %,10.0f events/s (%.2f s, process %.2f µs CPU/event,"
                                    + " replay thread %.2f µs CPU/event), %d live claims; load %.1f%n", n, run, mode,
                            count[0] / decode, decode, decodeCpu * 1e6 / count[0], decodeThread / count[0],
                            replayed / rebuild, rebuild, rebuildCpu * 1e6 / replayed, rebuildThread / replayed,
                            state.claims().liveCount(), load());
                    double[] b = best.computeIfAbsent(mode, m -> new double[2]);
                    b[0] = Math.max(b[0], count[0] / decode);
                    b[1] = Math.max(b[1], replayed / rebuild);
                }
            }
        }
        best.forEach((mode, b) -> System.out.printf(Locale.ROOT, "replay %,9d events, best of %d runs, pipeline %s:"
                + " decode only %,10.0f events/s; full rebuild through apply %,10.0f events/s%n", n, runs, mode, b[0], b[1]));
        Files.deleteIfExists(db);
        Files.deleteIfExists(Path.of(db + "-wal"));
        Files.deleteIfExists(Path.of(db + "-shm"));
    }
}
