package dev.synapsehub.bench;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Leader kill → first grant on a three-node mesh of separate {@code synapse-hub} processes (a
 * plain {@code main}; issue 13's failover benchmark, docs/benchmarks.md "Mesh").
 *
 * <p>Starts three nodes on 127.0.0.1 with {@code --metrics}, then for each of {@code --kills}
 * rounds: finds the leader from the nodes' {@code /metrics} ({@code synapse_mesh_leader}),
 * connects one agent to a surviving node (a follower), which claims a fresh task every
 * {@code 1000 / --rate} ms and releases every grant; once grants flow, SIGKILLs the leader
 * process and measures, on this JVM's monotonic clock:
 * <ul>
 *   <li>kill → first {@code claim_granted} for a claim <em>sent after the kill</em> (so nothing
 *       the old leader decided counts), the figure of the target (≤ 3 s p50);</li>
 *   <li>kill → a survivor's {@code /metrics} shows it leading a later term (polled every
 *       25 ms), to split election from the rest;</li>
 *   <li>the refusals the agent got meanwhile, by error code.</li>
 * </ul>
 * The killed node is then restarted on its storage and the next round waits until all three
 * agree again. Every loop is bounded in count and time; the processes are stopped at the end.
 */
public final class MeshFailoverBench {
    private static final int NODES = 3;
    private static final int MAX_KILLS = 50;

    private final Path dir;
    private final List<String> launcher;
    private final int raftBase;
    private final int wsBase;
    private final double rate;
    private final long roundTimeoutMillis;
    private final List<String> nodeArgs;
    private final Process[] processes = new Process[NODES];
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private MeshFailoverBench(Path dir, List<String> launcher, int raftBase, int wsBase, double rate,
                              long roundTimeoutMillis, List<String> nodeArgs) {
        this.dir = dir;
        this.launcher = launcher;
        this.raftBase = raftBase;
        this.wsBase = wsBase;
        this.rate = rate;
        this.roundTimeoutMillis = roundTimeoutMillis;
        this.nodeArgs = nodeArgs;
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> o = options(args);
        int kills = Integer.parseInt(o.getOrDefault("kills", "10"));
        double maxMinutes = Double.parseDouble(o.getOrDefault("max-minutes", "20"));
        if (kills < 1 || kills > MAX_KILLS || maxMinutes <= 0 || maxMinutes > 60) {
            throw new IllegalArgumentException("--kills 1.." + MAX_KILLS + ", --max-minutes (0, 60]");
        }
        Path dir = Path.of(o.getOrDefault("dir", "/tmp/meshkill"));
        List<String> launcher = List.of(o.getOrDefault("launcher", "bin/synapse-hub").split(" "));
        List<String> nodeArgs = o.containsKey("node-args") ? List.of(o.get("node-args").trim().split("\\s+")) : List.of();
        MeshFailoverBench bench = new MeshFailoverBench(dir, launcher, Integer.parseInt(o.getOrDefault("raft-base", "19871")),
                Integer.parseInt(o.getOrDefault("ws-base", "19881")), Double.parseDouble(o.getOrDefault("rate", "10")),
                (long) (Double.parseDouble(o.getOrDefault("round-timeout", "30")) * 1000), nodeArgs);
        Runtime.getRuntime().addShutdownHook(new Thread(bench::stopAll));
        try {
            bench.run(kills, System.nanoTime() + (long) (maxMinutes * 60e9));
        } finally {
            bench.stopAll();
        }
    }

    private static Map<String, String> options(String[] args) {
        Map<String, String> o = new HashMap<>();
        for (int i = 0; i < args.length; i++) {
            if (!args[i].startsWith("--") || i + 1 >= args.length) {
                throw new IllegalArgumentException("usage: MeshFailoverBench [--dir D] [--kills N] [--rate CLAIMS_PER_S]"
                        + " [--launcher 'bin/synapse-hub'] [--raft-base PORT] [--ws-base PORT] [--round-timeout S]"
                        + " [--max-minutes M] [--node-args 'extra hub flags']");
            }
            o.put(args[i].substring(2), args[++i]);
        }
        return o;
    }

    private String peers() {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < NODES; i++) {
            b.append(i == 0 ? "" : ",").append("n").append(i + 1).append("=127.0.0.1:").append(raftBase + i);
        }
        return b.toString();
    }

    private void start(int i) throws IOException {
        List<String> cmd = new ArrayList<>(launcher);
        cmd.addAll(List.of("--db", dir.resolve("n" + (i + 1) + ".db").toString(), "--port", String.valueOf(wsBase + i),
                "--mesh-id", "n" + (i + 1), "--mesh-peers", peers(), "--mesh-bootstrap", "--metrics", "--max-claims-per-agent", "20000",
                "--log-level", "WARN"));
        cmd.addAll(nodeArgs);
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("n" + (i + 1) + ".log").toFile()));
        processes[i] = pb.start();
    }

    private void stopAll() {
        for (Process p : processes) {
            if (p != null && p.isAlive()) {
                p.destroy();
            }
        }
        for (Process p : processes) {
            try {
                if (p != null && !p.waitFor(15, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** One node's figures from its /metrics, or null when it does not answer. */
    private Map<String, Double> metrics(int i) {
        try {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + (wsBase + i)
                    + "/metrics")).timeout(Duration.ofSeconds(2)).GET().build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                return null;
            }
            Map<String, Double> m = new HashMap<>();
            for (String line : r.body().split("\n")) {
                if (line.startsWith("synapse_mesh_") && !line.contains("{")) {
                    String[] parts = line.trim().split("\\s+");
                    m.put(parts[0], Double.parseDouble(parts[1]));
                }
            }
            return m;
        } catch (IOException | RuntimeException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /**
     * Waits until every node answers, exactly one leads, all are in its term and hold what it
     * committed; returns the leader's index and term.
     */
    private long[] awaitStable(long timeoutMillis) throws InterruptedException {
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000;
        while (System.nanoTime() - deadline < 0) {
            List<Map<String, Double>> all = new ArrayList<>();
            for (int i = 0; i < NODES; i++) {
                all.add(metrics(i));
            }
            int leader = -1;
            int leaders = 0;
            for (int i = 0; i < NODES; i++) {
                if (all.get(i) != null && all.get(i).getOrDefault("synapse_mesh_leader", 0.0) == 1.0) {
                    leader = i;
                    leaders++;
                }
            }
            if (leaders == 1 && all.stream().allMatch(m -> m != null)) {
                double term = all.get(leader).getOrDefault("synapse_mesh_term", -1.0);
                double commit = all.get(leader).getOrDefault("synapse_mesh_commit_index", -1.0);
                boolean together = all.stream().allMatch(m -> m.getOrDefault("synapse_mesh_term", -2.0) == term
                        && m.getOrDefault("synapse_mesh_applied_index", -1.0) >= commit - 2);
                if (together) {
                    return new long[] {leader, (long) term};
                }
            }
            Thread.sleep(200);
        }
        throw new IllegalStateException("the mesh did not settle on one leader within " + timeoutMillis + " ms; see "
                + dir + "/n*.log");
    }

    private void run(int kills, long deadline) throws Exception {
        Files.createDirectories(dir);
        try (var files = Files.list(dir)) {
            if (files.findAny().isPresent()) {
                throw new IllegalArgumentException(dir + " is not empty: give a fresh --dir");
            }
        }
        for (int i = 0; i < NODES; i++) {
            start(i);
        }
        awaitStable(300_000); // three JVMs starting on a loaded two-core host take a while
        System.out.printf(Locale.ROOT, "mesh of %d nodes up (peers %s); %d kill(s), claims at %.0f/s through a"
                + " surviving node%n", NODES, peers(), kills, rate);
        List<Round> rounds = new ArrayList<>();
        try {
            for (int k = 1; k <= kills && System.nanoTime() - deadline < 0; k++) {
                Round r = round(k);
                rounds.add(r);
                System.out.println(r.line());
                // bring the killed node back on its storage, and wait for all three to agree again
                start(r.killed);
                awaitStable(120_000);
            }
        } catch (IllegalStateException e) {
            // a mesh that does not settle (or grants nothing) ends the run; the rounds so far still count
            System.out.println("stopped after " + rounds.size() + " kill(s): " + e.getMessage());
        }
        summary(rounds);
    }

    /** What one kill showed. */
    private record Round(int k, int killed, int via, long oldTerm, long newTerm, double load, long killToLeaderNanos,
                         long killToGrantNanos, long killToAnyGrantNanos, Map<String, Long> refusals) {
        String line() {
            return String.format(Locale.ROOT, "kill %2d  n%d (leader, term %d) killed, client on n%d: leader after %s,"
                    + " first grant after %s (any grant %s), new term %d, refusals %s, load %.2f", k, killed + 1, oldTerm,
                    via + 1, ms(killToLeaderNanos), ms(killToGrantNanos), ms(killToAnyGrantNanos), newTerm, refusals, load);
        }
    }

    private Round round(int k) throws Exception {
        long[] stable = awaitStable(120_000);
        int leader = (int) stable[0];
        long oldTerm = stable[1];
        int via = (leader + 1) % NODES; // a follower: it survives the kill
        double load = loadAverage();
        try (HubClient client = HubClient.connect(URI.create("ws://127.0.0.1:" + (wsBase + via) + "/"),
                Duration.ofSeconds(30))) {
            String name = "killer-" + k;
            client.register(name, null, Duration.ofSeconds(30));
            Claimer claimer = new Claimer(client, name, "k" + k);
            client.onFrame(claimer::onFrame);
            // the agent's claims must not overload the mesh before the kill: at 10/s the gap is measured to 100 ms
            ScheduledFuture<?> pace = client.eventLoop().scheduleAtFixedRate(claimer::claim, 0,
                    (long) (1e9 / rate), TimeUnit.NANOSECONDS);
            try {
                // grants flow through this follower before the kill
                long warm = System.nanoTime() + 30_000_000_000L;
                while (claimer.granted.get() < 10 && System.nanoTime() - warm < 0) {
                    Thread.sleep(20);
                }
                if (claimer.granted.get() < 10) {
                    throw new IllegalStateException("no grants through n" + (via + 1) + " before the kill");
                }
                long killedAt = System.nanoTime();
                claimer.killedAt = killedAt;
                processes[leader].destroyForcibly(); // SIGKILL
                long leaderAt = -1;
                long roundDeadline = killedAt + roundTimeoutMillis * 1_000_000;
                long newTerm = -1;
                while (System.nanoTime() - roundDeadline < 0 && (leaderAt < 0 || claimer.firstGrantAfterKill < 0)) {
                    if (leaderAt < 0) {
                        for (int i = 0; i < NODES; i++) {
                            if (i == leader) {
                                continue;
                            }
                            Map<String, Double> m = metrics(i);
                            if (m != null && m.getOrDefault("synapse_mesh_leader", 0.0) == 1.0
                                    && m.get("synapse_mesh_term") > oldTerm) {
                                leaderAt = System.nanoTime();
                                newTerm = m.get("synapse_mesh_term").longValue();
                                break;
                            }
                        }
                    }
                    Thread.sleep(25);
                }
                processes[leader].waitFor(10, TimeUnit.SECONDS);
                long grant = claimer.firstGrantAfterKill;
                long any = claimer.firstAnyGrantAfterKill;
                return new Round(k, leader, via, oldTerm, newTerm, load, leaderAt < 0 ? -1 : leaderAt - killedAt,
                        grant < 0 ? -1 : grant - killedAt, any < 0 ? -1 : any - killedAt, claimer.refusals());
            } finally {
                pace.cancel(false);
            }
        }
    }

    /** The agent: a fresh task at the pace, each grant released; all on its connection's event loop. */
    private static final class Claimer {
        private final HubClient client;
        private final String name;
        private final String prefix;
        private final Map<String, Long> sentAt = new HashMap<>();
        private final Map<String, Long> refusals = new TreeMap<>();
        private final AtomicLong granted = new AtomicLong();
        private long seq;
        volatile long killedAt = -1;
        volatile long firstGrantAfterKill = -1;
        volatile long firstAnyGrantAfterKill = -1;

        Claimer(HubClient client, String name, String prefix) {
            this.client = client;
            this.name = name;
            this.prefix = prefix;
        }

        void claim() {
            String task = prefix + "-t" + (++seq);
            ObjectNode claim = client.frame(name, "claim");
            claim.put("task_id", task);
            claim.put("worktree", "wt-" + prefix);
            claim.putArray("paths").add("src/" + task);
            sentAt.put(task, System.nanoTime());
            client.sendAsync(claim);
        }

        void onFrame(ObjectNode f) {
            long now = System.nanoTime();
            String type = f.path("type").asText();
            if ("error".equals(type)) {
                if (killedAt >= 0) {
                    synchronized (refusals) {
                        refusals.merge(f.path("error_code").asText("?"), 1L, Long::sum);
                    }
                }
                return;
            }
            if (!"claim_granted".equals(type) || !name.equals(f.path("owner").asText())) {
                return;
            }
            String task = f.path("task_id").asText();
            Long sent = sentAt.remove(task);
            if (sent == null) {
                return; // a renewal answered twice, or a claim of another run
            }
            granted.incrementAndGet();
            long kill = killedAt;
            if (kill >= 0) {
                if (firstAnyGrantAfterKill < 0) {
                    firstAnyGrantAfterKill = now;
                }
                if (sent - kill >= 0 && firstGrantAfterKill < 0) {
                    firstGrantAfterKill = now;
                }
            }
            ObjectNode release = client.frame(name, "release");
            release.put("task_id", task);
            client.sendAsync(release);
        }

        Map<String, Long> refusals() {
            synchronized (refusals) {
                return new TreeMap<>(refusals);
            }
        }
    }

    private static void summary(List<Round> rounds) {
        List<Long> grants = new ArrayList<>();
        List<Long> leaders = new ArrayList<>();
        int missed = 0;
        double loadMin = Double.MAX_VALUE;
        double loadMax = 0;
        for (Round r : rounds) {
            if (r.killToGrantNanos < 0) {
                missed++;
            } else {
                grants.add(r.killToGrantNanos);
            }
            if (r.killToLeaderNanos >= 0) {
                leaders.add(r.killToLeaderNanos);
            }
            loadMin = Math.min(loadMin, r.load);
            loadMax = Math.max(loadMax, r.load);
        }
        grants.sort(null);
        leaders.sort(null);
        System.out.printf(Locale.ROOT, "kills %d, no grant within the round timeout: %d%n", rounds.size(), missed);
        System.out.printf(Locale.ROOT, "kill -> first grant (claim sent after the kill)  p50 %s  p90 %s  max %s  min %s%n",
                ms(pct(grants, 0.5)), ms(pct(grants, 0.9)), ms(pct(grants, 1.0)), ms(pct(grants, 0.0)));
        System.out.printf(Locale.ROOT, "kill -> new leader on /metrics                  p50 %s  p90 %s  max %s  min %s%n",
                ms(pct(leaders, 0.5)), ms(pct(leaders, 0.9)), ms(pct(leaders, 1.0)), ms(pct(leaders, 0.0)));
        System.out.printf(Locale.ROOT, "1-minute load average before the kills: %.2f .. %.2f%n", loadMin, loadMax);
    }

    /** Nearest-rank percentile of sorted values; -1 when there are none. */
    static long pct(List<Long> sorted, double q) {
        if (sorted.isEmpty()) {
            return -1;
        }
        int rank = (int) Math.ceil(q * sorted.size());
        return sorted.get(Math.max(0, Math.min(sorted.size() - 1, rank - 1)));
    }

    static String ms(long nanos) {
        return nanos < 0 ? "none" : String.format(Locale.ROOT, "%.0f ms", nanos / 1e6);
    }

    static double loadAverage() {
        try {
            return Double.parseDouble(Files.readString(Path.of("/proc/loadavg")).split(" ")[0]);
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }
}
