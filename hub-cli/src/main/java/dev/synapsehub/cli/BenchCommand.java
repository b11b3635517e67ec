package dev.synapsehub.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.net.HubClient;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code synapse-hub bench}: the hub's own load tool. Opens N agents against any wire-v2 hub
 * and runs one workload for a bounded time and count, printing throughput and latency
 * percentiles with a live progress line. The default {@code claims} workload runs, per agent,
 * a closed loop of claim → grant → release → receipt (optionally with a who_request every K
 * claims); {@code broadcast}, {@code directed} and {@code mailbox} exercise messaging (see
 * {@link MessagingBench}).
 */
@Command(name = "bench", mixinStandardHelpOptions = true, footer = ExitCodes.HELP_FOOTER,
        description = {"Drive load against a hub and report throughput and latency.",
            "Workloads: claims (default): closed-loop claim/release per agent. Every agent claims its own",
            "worktree, so claims never conflict; on an open hub all loopback agents share one quota principal,",
            "so start the hub with --max-claims-per-agent >= --agents.",
            "broadcast: --senders chat to \"all\" (closed loop, or --rate msgs/s); the --agents receivers",
            "measure delivery latency and count lost deliveries.",
            "directed: --agents (even) send directed chats with receipts to a partner, closed loop on the receipt.",
            "mailbox: --count (default 10000) directed chats to an offline identity, which then reconnects with",
            "mailbox: true and times the replay (the hub needs --db).",
            "Beyond 256 connections start the hub with --max-clients and --max-connections-per-host 0."})
public final class BenchCommand implements Callable<Integer> {
    private static final com.fasterxml.jackson.databind.ObjectMapper FRAME_READER =
            new com.fasterxml.jackson.databind.ObjectMapper();

    /** Hard bound on a run's length, whatever the options say. */
    static final double MAX_SECONDS = 3600;

    /** What the agents do. */
    enum Workload { claims, broadcast, directed, mailbox }

    @Option(names = "--workload", defaultValue = "claims",
            description = "claims, broadcast, directed or mailbox (default: ${DEFAULT-VALUE}).")
    Workload workload;

    @Option(names = "--url", paramLabel = "URI", defaultValue = "${env:SYNAPSE_URI:-ws://127.0.0.1:8876}",
            description = "Hub to load (default: $SYNAPSE_URI or ws://127.0.0.1:8876).")
    URI url;

    @Option(names = "--agents", defaultValue = "1", description = "Concurrent agents, one connection each; for broadcast the"
            + " receivers, for directed the senders, paired a_i -> a_(i xor 1) (default: ${DEFAULT-VALUE}).")
    int agents;

    @Option(names = "--duration", paramLabel = "SECONDS", defaultValue = "10",
            description = "Stop after this long (default: ${DEFAULT-VALUE}; at most 3600).")
    double durationSeconds;

    @Option(names = "--count", paramLabel = "N", defaultValue = "0",
            description = "Stop after N granted claims, N broadcasts sent or N receipts in all (0: only --duration"
                    + " bounds the run); for mailbox the backlog size (0: 10000).")
    long count;

    @Option(names = "--warmup", paramLabel = "SECONDS", defaultValue = "1",
            description = "Run this long before measuring (default: ${DEFAULT-VALUE}).")
    double warmupSeconds;

    @Option(names = "--who-every", paramLabel = "K", defaultValue = "0",
            description = "Also send a who_request after every K-th claim per agent (0: never).")
    int whoEvery;

    @Option(names = "--idle", paramLabel = "N", defaultValue = "0",
            description = "Additionally hold N idle registered connections for the whole run.")
    int idle;

    @Option(names = "--senders", paramLabel = "K", defaultValue = "1",
            description = "broadcast: concurrent senders (default: ${DEFAULT-VALUE}).")
    int senders;

    @Option(names = "--rate", paramLabel = "MSGS", defaultValue = "0",
            description = "broadcast: send this many messages per second in all, open loop (0: closed loop, each"
                    + " sender waits for the hub's echo of its last message).")
    double rate;

    @Option(names = "--drain", paramLabel = "SECONDS", defaultValue = "5",
            description = "broadcast/directed: wait at most this long after the run for outstanding deliveries"
                    + " (default: ${DEFAULT-VALUE}; at most 60).")
    double drainSeconds;

    @Option(names = "--connect-parallelism", paramLabel = "N", defaultValue = "32",
            description = "Connections opened and registered at a time (default: ${DEFAULT-VALUE}).")
    int connectParallelism;

    @Option(names = "--connect-timeout", paramLabel = "SECONDS", defaultValue = "30",
            description = "Per connection: handshake and registration at most this long (default: ${DEFAULT-VALUE}).")
    double connectTimeoutSeconds;

    @Option(names = "--token", description = "Connect token for a secured hub.")
    String token;

    @Option(names = "--name-prefix", defaultValue = "bench", description = "Agent names are PREFIX-RUN/aN (default: ${DEFAULT-VALUE}).")
    String namePrefix;

    @Option(names = "--quiet", description = "No live progress line.")
    boolean quiet;

    @Spec
    CommandSpec spec;

    private final LatencyHistogram claimLatency = new LatencyHistogram();
    private final LatencyHistogram whoLatency = new LatencyHistogram();
    private final AtomicLong granted = new AtomicLong();
    private final AtomicLong denied = new AtomicLong();
    private final AtomicLong errors = new AtomicLong();
    private volatile boolean measuring;
    private volatile boolean stopping;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if (agents < 1 || durationSeconds <= 0 || count < 0 || idle < 0 || whoEvery < 0 || senders < 1 || rate < 0
                || drainSeconds < 0 || connectParallelism < 1 || connectTimeoutSeconds <= 0) {
            err.println("synapse-hub: --agents/--senders/--connect-parallelism must be >= 1, --duration > 0,"
                    + " --count/--idle/--who-every/--rate/--drain >= 0");
            return ExitCodes.USAGE;
        }
        if (workload == Workload.directed && agents % 2 != 0) {
            err.println("synapse-hub: --workload directed pairs agents a_i -> a_(i xor 1): --agents must be even");
            return ExitCodes.USAGE;
        }
        if (workload == Workload.mailbox && count > MessagingBench.MAX_MAILBOX) {
            err.printf(Locale.ROOT, "synapse-hub: --workload mailbox takes --count <= %,d%n", MessagingBench.MAX_MAILBOX);
            return ExitCodes.USAGE;
        }
        String run = HexFormat.of().formatHex(new byte[] {(byte) ThreadLocalRandom.current().nextInt(),
                (byte) ThreadLocalRandom.current().nextInt(), (byte) ThreadLocalRandom.current().nextInt()});
        try (BenchConnections connections = new BenchConnections(url, token,
                Duration.ofMillis((long) (Math.min(connectTimeoutSeconds, 600) * 1000)), connectParallelism)) {
            if (workload != Workload.claims) {
                return new MessagingBench(this, run, connections, out, err).run();
            }
            return runClaims(run, connections, out, err);
        }
    }

    /** The run length after the hard bound. */
    double duration() {
        return Math.min(durationSeconds, MAX_SECONDS);
    }

    /** Opens {@code --idle} registered connections that discard what they receive. */
    List<HubClient> openIdle(String run, BenchConnections connections, PrintWriter err) throws IOException {
        List<String> names = new ArrayList<>();
        for (int i = 0; i < idle; i++) {
            names.add(namePrefix + "-" + run + "/idle" + i);
        }
        return connections.open(names, quiet ? null : err);
    }

    private int runClaims(String run, BenchConnections connections, PrintWriter out, PrintWriter err)
            throws InterruptedException {
        double duration = duration();
        List<Agent> loops = new ArrayList<>();
        try {
            openIdle(run, connections, err);
            List<String> names = new ArrayList<>();
            for (int i = 0; i < agents; i++) {
                names.add(namePrefix + "-" + run + "/a" + i);
            }
            List<HubClient> clients = connections.open(names, quiet ? null : err);
            for (int i = 0; i < agents; i++) {
                loops.add(new Agent(clients.get(i), names.get(i), "a" + i, "wt-" + run + "-" + i));
            }
        } catch (IOException e) {
            err.println("synapse-hub: cannot set up " + (agents + idle) + " connections to " + url + ": " + e.getMessage());
            connections.printHints(err, agents + idle);
            return ExitCodes.UNAVAILABLE;
        }
        Runtime runtime = Runtime.getRuntime();
        err.printf("bench: %d agent(s)%s against %s for %.0f s%s (warm-up %.0f s)%n", agents,
                idle > 0 ? " + " + idle + " idle" : "", url, duration, count > 0 ? " or " + count + " claims" : "",
                warmupSeconds);
        loops.forEach(Agent::start);
        long warmupEnd = System.nanoTime() + (long) (warmupSeconds * 1e9);
        while (System.nanoTime() < warmupEnd) {
            Thread.sleep(50);
        }
        granted.set(0);
        denied.set(0);
        measuring = true;
        long start = System.nanoTime();
        long deadline = start + (long) (duration * 1e9);
        long lastPrint = start;
        while (System.nanoTime() < deadline && (count == 0 || granted.get() < count)) {
            Thread.sleep(20);
            long now = System.nanoTime();
            if (!quiet && now - lastPrint >= 1_000_000_000L) {
                lastPrint = now;
                double secs = (now - start) / 1e9;
                err.printf(Locale.ROOT, "\r  %5.0fs  %,12d claims  %,10.0f/s  p50 %s  p99 %s  denied %d  errors %d   ",
                        secs, granted.get(), granted.get() / secs, micros(claimLatency.quantileNanos(0.5)),
                        micros(claimLatency.quantileNanos(0.99)), denied.get(), errors.get());
                err.flush();
            }
        }
        measuring = false;
        double elapsed = (System.nanoTime() - start) / 1e9;
        stopping = true;
        CountDownLatch drained = new CountDownLatch(loops.size());
        loops.forEach(a -> a.stop(drained));
        drained.await(5, TimeUnit.SECONDS);
        if (!quiet) {
            err.println();
        }
        long usedHeap = runtime.totalMemory() - runtime.freeMemory();
        out.printf(Locale.ROOT, "agents              %d (+%d idle)%n", agents, idle);
        out.printf(Locale.ROOT, "measured            %.2f s%n", elapsed);
        out.printf(Locale.ROOT, "claims granted      %,d  (%,.0f claims/s, %,.0f claim+release round trips/s)%n",
                granted.get(), granted.get() / elapsed, granted.get() / elapsed);
        out.printf(Locale.ROOT, "claims denied       %,d%n", denied.get());
        out.printf(Locale.ROOT, "errors              %,d%n", errors.get());
        out.printf(Locale.ROOT, "claim->grant        p50 %s  p99 %s  p99.9 %s  max %s%n",
                micros(claimLatency.quantileNanos(0.5)), micros(claimLatency.quantileNanos(0.99)),
                micros(claimLatency.quantileNanos(0.999)), micros(claimLatency.maxNanos()));
        if (whoLatency.count() > 0) {
            out.printf(Locale.ROOT, "who->snapshot       p50 %s  p99 %s  max %s  (%,d requests)%n",
                    micros(whoLatency.quantileNanos(0.5)), micros(whoLatency.quantileNanos(0.99)),
                    micros(whoLatency.maxNanos()), whoLatency.count());
        }
        out.printf(Locale.ROOT, "bench heap used     %,d MiB%n", usedHeap >> 20);
        if (connections.closedByHub() > 0) {
            out.printf(Locale.ROOT, "closed by hub       %,d  (%s)%n", connections.closedByHub(), connections.closeSummary());
        }
        out.flush();
        connections.printHints(err, agents + idle);
        return errors.get() == 0 ? ExitCodes.OK : ExitCodes.REFUSED;
    }

    static String micros(long nanos) {
        return nanos >= 10_000_000 ? String.format(Locale.ROOT, "%.1fms", nanos / 1e6)
                : String.format(Locale.ROOT, "%.0fµs", nanos / 1e3);
    }

    /** One agent's closed loop, driven entirely by frames arriving on its event loop. */
    private final class Agent {
        private final HubClient client;
        private final String name;
        private final String worktree;
        private final String taskPrefix;
        private long seq;
        private String task;
        private long sentAt;
        private long whoSentAt;
        private volatile CountDownLatch drained;

        Agent(HubClient client, String name, String taskPrefix, String worktree) {
            this.client = client;
            this.name = name;
            this.taskPrefix = taskPrefix;
            this.worktree = worktree;
        }

        void start() {
            // Every agent receives every other agent's broadcasts; parse only frames that can
            // concern this agent, so the load tool measures the hub rather than its own parsing.
            client.onText(text -> {
                String current = task;
                if ((current != null && text.contains(current)) || text.contains("\"error\"")
                        || text.contains("\"who_snapshot\"")) {
                    try {
                        onFrame((ObjectNode) FRAME_READER.readTree(text));
                    } catch (java.io.IOException | ClassCastException e) {
                        errors.incrementAndGet();
                    }
                }
            });
            client.execute(this::claimNext);
        }

        void stop(CountDownLatch latch) {
            drained = latch;
            client.execute(() -> {
                if (task == null) {
                    latch.countDown();
                }
            });
        }

        private void claimNext() {
            if (stopping || (count > 0 && granted.get() >= count && measuring)) {
                task = null;
                CountDownLatch latch = drained;
                if (latch != null) {
                    latch.countDown();
                }
                return;
            }
            task = taskPrefix + "-t" + (++seq);
            ObjectNode claim = client.frame(name, "claim");
            claim.put("task_id", task);
            claim.put("worktree", worktree);
            claim.putArray("paths").add("src/" + task);
            sentAt = System.nanoTime();
            client.sendAsync(claim);
        }

        private void onFrame(ObjectNode f) {
            String type = f.path("type").asText();
            switch (type) {
                case "claim_granted" -> {
                    if (task != null && task.equals(f.path("task_id").asText()) && name.equals(f.path("owner").asText())) {
                        if (measuring) {
                            claimLatency.record(System.nanoTime() - sentAt);
                        }
                        granted.incrementAndGet();
                        ObjectNode release = client.frame(name, "release");
                        release.put("task_id", task);
                        client.sendAsync(release);
                    }
                }
                case "claim_denied" -> {
                    if (task != null && task.equals(f.path("task_id").asText())) {
                        denied.incrementAndGet();
                        claimNext();
                    }
                }
                case "release_granted", "release_denied" -> {
                    if (task != null && task.equals(f.path("task_id").asText())) {
                        if (whoEvery > 0 && seq % whoEvery == 0) {
                            whoSentAt = System.nanoTime();
                            client.sendAsync(client.frame(name, "who_request"));
                        } else {
                            claimNext();
                        }
                    }
                }
                case "who_snapshot" -> {
                    if (measuring) {
                        whoLatency.record(System.nanoTime() - whoSentAt);
                    }
                    claimNext();
                }
                case "error" -> {
                    errors.incrementAndGet();
                    claimNext();
                }
                default -> {
                    // broadcasts from other agents: ignored
                }
            }
        }
    }
}
