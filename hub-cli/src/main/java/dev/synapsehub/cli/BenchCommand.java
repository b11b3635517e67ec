package dev.synapsehub.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.net.HubClient;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.util.concurrent.DefaultThreadFactory;
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
 * {@code synapse-hub bench}: the hub's own load tool. Opens N agents against any wire-v2 hub,
 * each running a closed loop of claim → grant → release → receipt (optionally with a
 * who_request every K claims), for a bounded time and count, and prints throughput and
 * claim→grant latency percentiles with a live progress line.
 */
@Command(name = "bench", mixinStandardHelpOptions = true, footer = ExitCodes.HELP_FOOTER,
        description = {"Drive claim/release load against a hub and report throughput and latency.",
            "Every agent claims its own worktree, so claims never conflict; on an open hub all loopback",
            "agents share one quota principal, so start the hub with --max-claims-per-agent >= --agents."})
public final class BenchCommand implements Callable<Integer> {
    /** Hard bound on a run's length, whatever the options say. */
    static final double MAX_SECONDS = 3600;

    @Option(names = "--url", paramLabel = "URI", defaultValue = "${env:SYNAPSE_URI:-ws://127.0.0.1:8876}",
            description = "Hub to load (default: $SYNAPSE_URI or ws://127.0.0.1:8876).")
    URI url;

    @Option(names = "--agents", defaultValue = "1", description = "Concurrent agents, one connection each (default: ${DEFAULT-VALUE}).")
    int agents;

    @Option(names = "--duration", paramLabel = "SECONDS", defaultValue = "10",
            description = "Stop after this long (default: ${DEFAULT-VALUE}; at most 3600).")
    double durationSeconds;

    @Option(names = "--count", paramLabel = "N", defaultValue = "0",
            description = "Stop after N granted claims in all (0: only --duration bounds the run).")
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
        if (agents < 1 || durationSeconds <= 0 || count < 0 || idle < 0 || whoEvery < 0) {
            err.println("synapse-hub: --agents must be >= 1, --duration > 0, --count/--idle/--who-every >= 0");
            return ExitCodes.USAGE;
        }
        double duration = Math.min(durationSeconds, MAX_SECONDS);
        String run = HexFormat.of().formatHex(new byte[] {(byte) ThreadLocalRandom.current().nextInt(),
                (byte) ThreadLocalRandom.current().nextInt(), (byte) ThreadLocalRandom.current().nextInt()});
        EventLoopGroup group = new NioEventLoopGroup(Math.max(1, Runtime.getRuntime().availableProcessors()),
                new DefaultThreadFactory("bench-io", true));
        List<HubClient> clients = new ArrayList<>();
        List<Agent> loops = new ArrayList<>();
        try {
            Duration connectTimeout = Duration.ofSeconds(10);
            for (int i = 0; i < idle; i++) {
                HubClient c = HubClient.connect(url, connectTimeout, group);
                clients.add(c);
                c.register(namePrefix + "-" + run + "/idle" + i, token, connectTimeout);
                c.onFrame(f -> { });
            }
            for (int i = 0; i < agents; i++) {
                HubClient c = HubClient.connect(url, connectTimeout, group);
                clients.add(c);
                String name = namePrefix + "-" + run + "/a" + i;
                c.register(name, token, connectTimeout);
                loops.add(new Agent(c, name, "a" + i, "wt-" + run + "-" + i));
            }
        } catch (IOException | java.util.concurrent.TimeoutException e) {
            err.println("synapse-hub: cannot set up " + (agents + idle) + " connections to " + url + ": " + e.getMessage());
            close(clients, group);
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
        out.flush();
        close(clients, group);
        return errors.get() == 0 ? ExitCodes.OK : ExitCodes.REFUSED;
    }

    private static String micros(long nanos) {
        return nanos >= 10_000_000 ? String.format(Locale.ROOT, "%.1fms", nanos / 1e6)
                : String.format(Locale.ROOT, "%.0fµs", nanos / 1e3);
    }

    private static void close(List<HubClient> clients, EventLoopGroup group) {
        for (HubClient c : clients) {
            c.close();
        }
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
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
            client.onFrame(this::onFrame);
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
