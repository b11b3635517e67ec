package dev.synapsehub.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import io.netty.buffer.ByteBuf;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
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
            "",
            "Workloads:",
            "claims (default): a closed claim/release loop per agent (--in-flight loops each). Every agent claims"
                + " its own worktree, so claims never conflict; on an open hub all loopback agents share one quota"
                + " principal, so start the hub with --max-claims-per-agent >= --agents x --in-flight. Requests a hub"
                + " refuses as busy are sent again after a pause and counted apart from errors.",
            "broadcast: --senders chat to \"all\" (closed loop, or --rate msgs/s); the --agents receivers measure"
                + " delivery latency and count lost deliveries.",
            "directed: --agents (even) send directed chats with receipts to a partner, closed loop on the receipt.",
            "mailbox: --count (default 10000) directed chats to an offline identity, which then reconnects with"
                + " mailbox: true and times the replay (the hub needs --db).",
            "",
            "Beyond 256 connections start the hub with --max-clients and --max-connections-per-host 0."})
public final class BenchCommand implements Callable<Integer> {
    private static final com.fasterxml.jackson.databind.ObjectMapper FRAME_READER =
            new com.fasterxml.jackson.databind.ObjectMapper();

    /** Hard bound on a run's length, whatever the options say. */
    static final double MAX_SECONDS = 3600;

    /** After a {@code busy} refusal, how long an agent waits before resending what is still unanswered. */
    static final long RETRY_PAUSE_MILLIS = 250;

    /** What the agents do. */
    enum Workload { claims, broadcast, directed, mailbox }

    @Option(names = "--workload", defaultValue = "claims",
            description = "claims, broadcast, directed or mailbox (default: ${DEFAULT-VALUE}).")
    Workload workload;

    @Option(names = "--url", paramLabel = "URI", defaultValue = "${env:SYNAPSE_URI:-ws://127.0.0.1:8876}",
            description = "Hub to load (default: $SYNAPSE_URI or ws://127.0.0.1:8876).")
    URI url;

    @Option(names = "--spread-urls", paramLabel = "URI[,URI...]", split = ",",
            description = "claims: spread the agents (and idle connections) round-robin over these hubs, e.g. the"
                    + " nodes of a mesh, instead of --url; the hub CPU reported is the sum of their /metrics.")
    List<URI> spreadUrls;

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
            description = "Run this long before measuring (default: ${DEFAULT-VALUE}; at most 3600).")
    double warmupSeconds;

    @Option(names = "--who-every", paramLabel = "K", defaultValue = "0",
            description = "Also send a who_request after every K-th claim per agent (0: never).")
    int whoEvery;

    @Option(names = "--in-flight", paramLabel = "N", defaultValue = "1",
            description = "claims: independent claim/release loops per agent, i.e. claims each agent keeps"
                    + " in flight (default: ${DEFAULT-VALUE}).")
    int inFlight;

    @Option(names = "--idle", paramLabel = "N", defaultValue = "0",
            description = "Additionally hold N idle registered connections for the whole run.")
    int idle;

    @Option(names = "--idle-read-interval-ms", paramLabel = "MS", defaultValue = "0",
            description = "Read the --idle connections in passes at most one every MS milliseconds (0: as frames"
                    + " come): each read then takes what came since the last, and the hub's sends wake no reader;"
                    + " the idle agents (and the observer's line) get their frames up to MS later.")
    long idleReadIntervalMs;

    @Option(names = "--senders", paramLabel = "K", defaultValue = "1",
            description = "broadcast: concurrent senders (default: ${DEFAULT-VALUE}).")
    int senders;

    @Option(names = "--rate", paramLabel = "PER_SECOND", defaultValue = "0",
            description = "broadcast: send this many messages per second in all, open loop (0: closed loop, each"
                    + " sender waits for the hub's echo of its last message). claims: start at most this many"
                    + " claims per second in all once the warm-up is over, each agent slot waiting for its turn (0: as"
                    + " fast as the loop goes).")
    double rate;

    @Option(names = "--paced-warmup",
            description = "claims: pace the warm-up at --rate too (default: the warm-up runs flat out). A fleet of"
                    + " thousands of slow claimants (e.g. --agents 10000 --rate 1000) run flat out floods the hub and"
                    + " leaves a backlog in the measured phase.")
    boolean pacedWarmup;

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

    @Option(names = "--source-addresses", paramLabel = "A[-B][,...]",
            description = "Bind the sockets round-robin to these local IPv4 addresses, e.g. 127.0.0.2-127.0.0.9:"
                    + " one source address has about 28,000 ephemeral ports towards one hub, so 100,000 connections"
                    + " need four or more (default: the system's choice).")
    String sourceAddresses;

    @Option(names = "--token", description = "Connect token for a secured hub.")
    String token;

    @Option(names = "--name-prefix", defaultValue = "bench", description = "Agent names are PREFIX-RUN/aN (default: ${DEFAULT-VALUE}).")
    String namePrefix;

    @Option(names = "--quiet", description = "No live progress line.")
    boolean quiet;

    @Option(names = "--metrics-url", paramLabel = "URL",
            description = "Where to read the hub's process_cpu_seconds_total before and after the run (default:"
                    + " /metrics on the --url host and port; the hub serves it with --metrics).")
    URI metricsUrl;

    @Spec
    CommandSpec spec;

    private final SendLatency claimLatency = new SendLatency();
    private final LatencyHistogram whoLatency = new LatencyHistogram();
    /**
     * How long after its claim was sent an idle agent (an observer) got the claim's
     * {@code claim_granted}: what a longer broadcast linger costs everyone but the claimant.
     */
    private final LatencyHistogram observedLatency = new LatencyHistogram();
    /** The actual send instant of each claim whose grant the observer has not seen yet, by task. */
    private final ObservedClaims claimsToObserve = new ObservedClaims();
    /** Set once an observer watches: only then do claims register in {@link #claimsToObserve}. */
    private volatile boolean observing;
    private final AtomicLong granted = new AtomicLong();
    private final AtomicLong denied = new AtomicLong();
    private final AtomicLong errors = new AtomicLong();
    private final AtomicLong busy = new AtomicLong();
    private final AtomicLong resent = new AtomicLong();
    private volatile boolean measuring;
    private volatile boolean stopping;
    /** When the measured phase began: paced slots lay their schedules from it. */
    private volatile long measureStart;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if (agents < 1 || inFlight < 1 || inFlight > 1024 || durationSeconds <= 0 || count < 0 || idle < 0 || whoEvery < 0 || senders < 1 || rate < 0
                || drainSeconds < 0 || connectParallelism < 1 || connectTimeoutSeconds <= 0 || idleReadIntervalMs < 0
                || idleReadIntervalMs > 1000) {
            err.println("synapse-hub: --agents/--senders/--connect-parallelism must be >= 1, --in-flight 1..1024, --duration > 0,"
                    + " --count/--idle/--who-every/--rate/--drain >= 0, --idle-read-interval-ms 0..1000");
            return ExitCodes.USAGE;
        }
        try {
            // NaN passes every comparison above; the warm-up has the run's bound (it is part of the run's length)
            SecondsOption.positive("--duration", durationSeconds);
            SecondsOption.zeroOrPositive("--warmup", warmupSeconds, MAX_SECONDS, "no warm-up");
            SecondsOption.zeroOrPositive("--drain", drainSeconds, Double.POSITIVE_INFINITY, "no wait");
            SecondsOption.positive("--connect-timeout", connectTimeoutSeconds);
        } catch (IllegalArgumentException e) {
            err.println("synapse-hub: " + e.getMessage());
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
        if (spreadUrls != null && !spreadUrls.isEmpty() && workload != Workload.claims) {
            err.println("synapse-hub: --spread-urls is for --workload claims only");
            return ExitCodes.USAGE;
        }
        SourceAddresses sources = null;
        if (sourceAddresses != null) {
            try {
                sources = SourceAddresses.parse(sourceAddresses);
            } catch (IllegalArgumentException e) {
                err.println("synapse-hub: --source-addresses: " + e.getMessage());
                return ExitCodes.USAGE;
            }
        }
        try (BenchConnections connections = new BenchConnections(hubs(), token,
                Duration.ofMillis((long) (Math.min(connectTimeoutSeconds, 600) * 1000)), connectParallelism, sources)) {
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

    /** The hubs the agents connect to: {@code --spread-urls}, else {@code --url}. */
    List<URI> hubs() {
        return spreadUrls == null || spreadUrls.isEmpty() ? List.of(url) : List.copyOf(spreadUrls);
    }

    /** The hub's and this tool's CPU over the measured phase, to be started and stopped around it. */
    RunCpu runCpu() {
        return metricsUrl != null ? new RunCpu(metricsUrl)
                : RunCpu.summing(hubs().stream().map(RunCpu::metricsUrl).toList());
    }

    /**
     * True, after saying so on {@code err}, when the hub or the network dropped connections of
     * this run: its agents stopped part-way, so any figure would describe a smaller, shorter
     * run than the one asked for, and none is printed.
     */
    static boolean refuseDroppedRun(BenchConnections connections, PrintWriter err, int wanted) {
        if (connections.closedByHub() == 0) {
            return false;
        }
        err.printf(Locale.ROOT, "synapse-hub: %,d of %,d connection(s) were dropped during the run (close codes %s):"
                + " no figure is printed for it%n", connections.closedByHub(), wanted, connections.closeSummary());
        connections.printHints(err, wanted);
        return true;
    }

    /** Opens {@code --idle} registered connections that discard what they receive. */
    List<HubClient> openIdle(String run, BenchConnections connections, PrintWriter err) throws IOException {
        List<String> names = new ArrayList<>();
        for (int i = 0; i < idle; i++) {
            names.add(namePrefix + "-" + run + "/idle" + i);
        }
        List<HubClient> idlers = connections.openIdle(names, quiet ? null : err);
        if (!idlers.isEmpty()) {
            // only once every idle connection is registered: registration waits for answers
            connections.readIdleInPasses(Duration.ofMillis(idleReadIntervalMs));
        }
        return idlers;
    }

    private int runClaims(String run, BenchConnections connections, PrintWriter out, PrintWriter err)
            throws InterruptedException {
        double duration = duration();
        List<Agent> loops = new ArrayList<>();
        try {
            List<HubClient> idlers = openIdle(run, connections, err);
            if (!idlers.isEmpty() && agents > 0) {
                // the last one registered is about the last its hub loop visits in a fan-out pass
                // (members in order of joining), so it sees about when every socket has the grant
                observe(idlers.get(idlers.size() - 1));
            }
            List<String> names = new ArrayList<>();
            for (int i = 0; i < agents; i++) {
                names.add(namePrefix + "-" + run + "/a" + i);
            }
            List<HubClient> clients = connections.open(names, quiet ? null : err);
            for (int i = 0; i < agents; i++) {
                loops.add(new Agent(clients.get(i), names.get(i), "a" + i, "wt-" + run + "-" + i, i));
            }
        } catch (IOException e) {
            err.println("synapse-hub: cannot set up " + (agents + idle) + " connections to " + hubs() + ": " + e.getMessage());
            connections.printHints(err, agents + idle);
            return ExitCodes.UNAVAILABLE;
        }
        Runtime runtime = Runtime.getRuntime();
        err.printf(Locale.ROOT, "bench: %d agent(s)%s%s%s against %s for %.0f s%s (warm-up %.0f s)%n", agents,
                inFlight > 1 ? " x " + inFlight + " claims in flight" : "", idle > 0 ? " + " + idle + " idle" : "",
                rate > 0 ? String.format(Locale.ROOT, " at <= %,.0f claims/s", rate) : "",
                hubs().size() == 1 ? hubs().get(0) : hubs() + " (round-robin)", duration,
                count > 0 ? " or " + count + " claims" : "", warmupSeconds);
        if (pacedWarmup && rate > 0) {
            measureStart = System.nanoTime(); // the pace's origin; each slot keeps its schedule into the measured phase
        }
        loops.forEach(Agent::start);
        long warmupEnd = System.nanoTime() + (long) (warmupSeconds * 1e9);
        while (System.nanoTime() < warmupEnd) {
            Thread.sleep(50);
        }
        RunCpu cpu = runCpu(); // read first: the scrape takes a moment, and claims counted during it must not count
        cpu.start();
        granted.set(0);
        denied.set(0);
        measureStart = System.nanoTime();
        measuring = true;
        long start = measureStart;
        long deadline = start + (long) (duration * 1e9);
        long lastPrint = start;
        // a dropped connection ends the run: its agent stopped, so nothing measured after counts
        while (System.nanoTime() < deadline && (count == 0 || granted.get() < count) && connections.closedByHub() == 0) {
            Thread.sleep(20);
            long now = System.nanoTime();
            if (!quiet && now - lastPrint >= 1_000_000_000L) {
                lastPrint = now;
                double secs = (now - start) / 1e9;
                err.printf(Locale.ROOT, "\r  %5.0fs  %,12d claims  %,10.0f/s  p50 %s  p99 %s  denied %d  busy %d  errors %d   ",
                        secs, granted.get(), granted.get() / secs, micros(claimLatency.fromIntended().quantileNanos(0.5)),
                        micros(claimLatency.fromIntended().quantileNanos(0.99)), denied.get(), busy.get(), errors.get());
                err.flush();
            }
        }
        measuring = false;
        double elapsed = (System.nanoTime() - start) / 1e9;
        cpu.stop();
        stopping = true;
        CountDownLatch drained = new CountDownLatch(loops.size());
        loops.forEach(a -> a.stop(drained));
        drained.await(5, TimeUnit.SECONDS);
        // grants of claims still waiting will not come (the agents stopped): nothing to hold on to
        claimsToObserve.clear();
        if (!quiet) {
            err.println();
        }
        if (refuseDroppedRun(connections, err, agents + idle)) {
            return ExitCodes.REFUSED;
        }
        long usedHeap = runtime.totalMemory() - runtime.freeMemory();
        out.printf(Locale.ROOT, "agents              %d x %d in flight (+%d idle%s)%s%n", agents, inFlight, idle,
                idle > 0 && idleReadIntervalMs > 0 ? ", read every " + idleReadIntervalMs + " ms" : "",
                rate > 0 ? String.format(Locale.ROOT, ", paced at %,.0f claims/s", rate) : "");
        out.printf(Locale.ROOT, "measured            %.2f s%n", elapsed);
        // every granted claim is one claim+release cycle, so one rate says both
        out.printf(Locale.ROOT, "claims granted      %,d  (%,.0f claims/s)%n", granted.get(), granted.get() / elapsed);
        out.printf(Locale.ROOT, "claims denied       %,d%n", denied.get());
        out.printf(Locale.ROOT, "errors              %,d%n", errors.get());
        if (busy.get() > 0 || resent.get() > 0) {
            out.printf(Locale.ROOT, "busy refusals       %,d  (requests resent after a pause: %,d)%n", busy.get(), resent.get());
        }
        if (rate > 0) {
            out.printf(Locale.ROOT, "claim->grant        %s  (from the intended send time)%n",
                    SendLatency.percentiles(claimLatency.fromIntended()));
            out.printf(Locale.ROOT, "  from actual send  %s  (leaves out waits for a late hub)%n",
                    SendLatency.percentiles(claimLatency.fromActual()));
        } else {
            // a closed loop sends each claim when its slot is free: intended and actual are one instant
            out.printf(Locale.ROOT, "claim->grant        %s%n", SendLatency.percentiles(claimLatency.fromActual()));
        }
        if (observedLatency.count() > 0) {
            out.printf(Locale.ROOT, "observer's grant    %s  (an idle agent's copy of the broadcast, from the actual send)%n",
                    SendLatency.percentiles(observedLatency));
        }
        if (whoLatency.count() > 0) {
            out.printf(Locale.ROOT, "who->snapshot       p50 %s  p99 %s  max %s  (%,d requests)%n",
                    micros(whoLatency.quantileNanos(0.5)), micros(whoLatency.quantileNanos(0.99)),
                    micros(whoLatency.maxNanos()), whoLatency.count());
        }
        cpu.print(out);
        out.printf(Locale.ROOT, "bench heap used     %,d MiB%n", usedHeap >> 20);
        out.flush();
        connections.printHints(err, agents + idle);
        return errors.get() == 0 ? ExitCodes.OK : ExitCodes.REFUSED;
    }

    /** The bytes every claim_granted frame carries, as the observer scans for them. */
    private static final ByteBuf CLAIM_GRANTED = io.netty.buffer.Unpooled.unreleasableBuffer(
            io.netty.buffer.Unpooled.wrappedBuffer("\"claim_granted\"".getBytes(StandardCharsets.UTF_8)));

    /**
     * Makes {@code idler} an observer: it still reads every frame, and parses only those that
     * carry {@code "claim_granted"} (one per claim cycle), timing each against its claim's send.
     */
    private void observe(HubClient idler) {
        observing = true;
        idler.onBytes(bytes -> {
            if (io.netty.buffer.ByteBufUtil.indexOf(CLAIM_GRANTED, bytes) < 0) {
                return;
            }
            long now = System.nanoTime();
            try {
                String task = FRAME_READER.readTree(bytes.toString(StandardCharsets.UTF_8)).path("task_id").asText();
                // measured or not was decided when the claim was sent (ObservedClaims)
                claimsToObserve.granted(task, now).ifPresent(observedLatency::record);
            } catch (java.io.IOException e) {
                errors.incrementAndGet();
            }
        });
    }

    static String micros(long nanos) {
        return nanos >= 10_000_000 ? String.format(Locale.ROOT, "%.1fms", nanos / 1e6)
                : String.format(Locale.ROOT, "%.0fµs", nanos / 1e3);
    }

    /**
     * One agent: {@code --in-flight} independent closed loops (slots), driven entirely by frames
     * arriving on its event loop. Each slot claims its own tasks and paths in the agent's
     * worktree, so its claims never conflict.
     */
    private final class Agent {
        private final HubClient client;
        private final String name;
        private final String worktree;
        private final String taskPrefix;
        /** The agent's name as a JSON string: every frame that concerns it carries this. */
        private final byte[] quotedName;
        /** Where the search anchors in {@link #quotedName}: its last '/', else its opening quote. */
        private final int anchor;
        private final Map<String, Slot> byTask = new HashMap<>();
        private final List<Slot> slots = new ArrayList<>();
        private final ArrayDeque<Slot> whoWaiters = new ArrayDeque<>();
        /** Tasks whose claim was sent twice: a grant that comes after the slot moved on is released. */
        private final Set<String> resentClaims = new HashSet<>();
        private int active;
        private boolean counted;
        private volatile CountDownLatch drained;

        Agent(HubClient client, String name, String taskPrefix, String worktree, int index) {
            this.client = client;
            this.name = name;
            this.taskPrefix = taskPrefix;
            this.worktree = worktree;
            this.quotedName = ("\"" + name + "\"").getBytes(StandardCharsets.UTF_8);
            int slash = quotedName.length - 1;
            while (slash > 0 && quotedName[slash] != '/') {
                slash--;
            }
            this.anchor = slash;
            for (int i = 0; i < inFlight; i++) {
                slots.add(new Slot(inFlight == 1 ? taskPrefix : taskPrefix + "s" + i, index * inFlight + i));
            }
        }

        void start() {
            // Every agent receives every other agent's broadcasts; decode and parse only frames
            // naming this agent (as owner or target), so the load tool measures the hub rather
            // than its own parsing.
            client.onBytes(bytes -> {
                if (!names(bytes)) {
                    return;
                }
                try {
                    onFrame((ObjectNode) FRAME_READER.readTree(bytes.toString(StandardCharsets.UTF_8)));
                } catch (java.io.IOException | ClassCastException e) {
                    errors.incrementAndGet();
                }
            });
            client.execute(() -> {
                active = slots.size();
                slots.forEach(Slot::claimNext);
            });
        }

        /**
         * True when the frame contains this agent's quoted name. Most frames are other agents'
         * broadcasts, so this is the load tool's hottest loop: it looks for the name's rarest
         * byte (the {@code /} of {@code PREFIX-RUN/aN}) with Netty's word-at-a-time search and
         * compares the name only around those few hits.
         */
        private boolean names(ByteBuf bytes) {
            int from = bytes.readerIndex();
            int to = bytes.writerIndex();
            byte[] needle = quotedName;
            if (to - from < needle.length) {
                return false;
            }
            for (int hit = bytes.indexOf(from + anchor, to, needle[anchor]); hit >= 0;
                    hit = bytes.indexOf(hit + 1, to, needle[anchor])) {
                int at = hit - anchor;
                if (at >= from && at + needle.length <= to && matches(bytes, at, needle)) {
                    return true;
                }
            }
            return false;
        }

        /** Compares from the end: agents' names share their prefix and differ in the last bytes. */
        private static boolean matches(ByteBuf bytes, int at, byte[] needle) {
            for (int i = needle.length - 1; i >= 0; i--) {
                if (bytes.getByte(at + i) != needle[i]) {
                    return false;
                }
            }
            return true;
        }

        void stop(CountDownLatch latch) {
            drained = latch;
            client.execute(() -> {
                if (active == 0) {
                    countDrained();
                }
            });
        }

        /** Counts this agent as drained, once (stop and the last slot may both get there). */
        private void countDrained() {
            CountDownLatch latch = drained;
            if (latch != null && !counted) {
                counted = true;
                latch.countDown();
            }
        }

        private void onFrame(ObjectNode f) {
            String type = f.path("type").asText();
            if ("error".equals(type)) {
                if (!"busy".equals(f.path("error_code").asText())) {
                    errors.incrementAndGet(); // fails the run (exit code); its slot stalls
                    return;
                }
                // A busy hub refused a request without applying it. Errors carry no task id, so
                // after a pause every claim or release already waiting when this came and still
                // unanswered is sent again (with one claim in flight per agent, exactly the
                // refused one). One that was applied and is only slow is answered twice: the
                // slot takes the first answer, and a claim granted again after its release is
                // released again (below).
                busy.incrementAndGet();
                long errorAt = System.nanoTime();
                client.eventLoop().schedule(() -> slots.forEach(slot -> slot.resendIfSentBefore(errorAt)),
                        RETRY_PAUSE_MILLIS, TimeUnit.MILLISECONDS);
                return;
            }
            if ("who_snapshot".equals(type)) {
                Slot slot = whoWaiters.poll(); // snapshots answer in request order
                if (slot != null) {
                    slot.outstanding = null;
                    if (measuring) {
                        whoLatency.record(System.nanoTime() - slot.whoSentAt);
                    }
                    slot.claimNext();
                }
                return;
            }
            String taskId = f.path("task_id").asText();
            Slot slot = byTask.get(taskId);
            if (slot != null) {
                slot.onFrame(type, f);
            } else if ("claim_granted".equals(type) && name.equals(f.path("owner").asText())
                    && resentClaims.remove(taskId)) {
                // a resent claim renewed after the slot had released the task: do not leave it held
                ObjectNode release = client.frame(name, "release");
                release.put("task_id", taskId);
                client.sendAsync(release);
            }
        }

        private final class Slot {
            private final String prefix;
            /** This slot's place among all agents' slots: where its schedule starts within one interval. */
            private final int ordinal;
            private long seq;
            private String task;
            private long sentAt;
            /** When the pace meant the current claim to go out; its send instant in a closed loop. */
            private long intendedAt;
            /** When the pace means the next claim to go out; 0 before the first paced claim. */
            private long nextIntended;
            private long whoSentAt;
            /** The claim, release or who_request awaiting its answer, null when none. */
            private ObjectNode outstanding;
            private long outstandingSince;

            Slot(String prefix, int ordinal) {
                this.prefix = prefix;
                this.ordinal = ordinal;
            }

            private void send(ObjectNode request) {
                outstanding = request;
                outstandingSince = System.nanoTime();
                client.sendAsync(request);
            }

            /** True while this slot's outstanding request is of {@code type}. */
            private boolean awaiting(String type) {
                return outstanding != null && type.equals(outstanding.path("type").asText());
            }

            void resendIfSentBefore(long errorAt) {
                if (outstanding != null && outstandingSince <= errorAt) {
                    resent.incrementAndGet();
                    if (awaiting("claim")) {
                        resentClaims.add(task);
                    }
                    send(outstanding);
                }
            }

            void claimNext() {
                if (task != null) {
                    byTask.remove(task);
                }
                if (rate > 0 && (measuring || pacedWarmup) && !stopping) {
                    // paced while measuring (the warm-up runs flat out, so the hub's JIT has
                    // compiled the claim path before the first measured claim; with
                    // --paced-warmup it is paced too, on the same schedule). The schedule is
                    // fixed: claim k of this slot is due at its start + k intervals, however late
                    // the hub answered claim k-1, so a stall shows in the latency of every claim
                    // that was due during it (measured from the intended instant).
                    int slotsInAll = agents * inFlight;
                    double interval = 1e9 * slotsInAll / rate;
                    if (nextIntended == 0) {
                        // slots start spread over one interval, so the aggregate pace is even
                        nextIntended = measureStart + (long) (interval * ordinal / slotsInAll);
                    }
                    long intended = nextIntended;
                    nextIntended = intended + (long) interval;
                    long wait = intended - System.nanoTime();
                    if (wait > 0) {
                        task = null;
                        client.eventLoop().schedule(() -> claimNow(intended), wait, TimeUnit.NANOSECONDS);
                        return;
                    }
                    claimNow(intended);
                    return;
                }
                claimNow(0);
            }

            /** Sends the next claim; {@code intended}: when the pace meant it to go out, 0 in a closed loop. */
            private void claimNow(long intended) {
                if (stopping || (count > 0 && granted.get() >= count && measuring)) {
                    task = null;
                    if (--active == 0) {
                        countDrained();
                    }
                    return;
                }
                task = prefix + "-t" + (++seq);
                byTask.put(task, this);
                ObjectNode claim = client.frame(name, "claim");
                claim.put("task_id", task);
                claim.put("worktree", worktree);
                claim.putArray("paths").add("src/" + task);
                sentAt = System.nanoTime();
                intendedAt = intended == 0 ? sentAt : intended;
                if (observing) {
                    claimsToObserve.sent(task, sentAt, measuring);
                }
                send(claim);
            }

            void onFrame(String type, ObjectNode f) {
                // a resent request may be answered twice: only the first answer moves the slot on
                boolean claiming = awaiting("claim");
                boolean releasing = awaiting("release");
                switch (type) {
                    case "claim_granted" -> {
                        if (claiming && name.equals(f.path("owner").asText())) {
                            if (measuring) {
                                claimLatency.record(intendedAt, sentAt, System.nanoTime());
                            }
                            granted.incrementAndGet();
                            ObjectNode release = client.frame(name, "release");
                            release.put("task_id", task);
                            send(release);
                        }
                    }
                    case "claim_denied" -> {
                        if (claiming) {
                            outstanding = null;
                            denied.incrementAndGet();
                            claimNext();
                        }
                    }
                    case "release_granted", "release_denied" -> {
                        if (!releasing) {
                            return;
                        }
                        outstanding = null;
                        if (whoEvery > 0 && seq % whoEvery == 0) {
                            byTask.remove(task);
                            whoSentAt = System.nanoTime();
                            whoWaiters.add(this);
                            send(client.frame(name, "who_request")); // resent, too, if refused busy
                        } else {
                            claimNext();
                        }
                    }
                    default -> {
                        // other frames about this task (e.g. progress notes): ignored
                    }
                }
            }
        }
    }
}
