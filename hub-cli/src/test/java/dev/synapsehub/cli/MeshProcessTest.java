package dev.synapsehub.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.client.tls.ClientTls;
import dev.synapsehub.client.tls.TestCertificates;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Three mesh nodes as three separate {@code synapse-hub} processes, started as docs/mesh.md
 * "Running three nodes" tells operators ({@code --db}, {@code --port}, {@code --mesh-id},
 * {@code --mesh-peers}). Under a bounded load of agents claiming and releasing contended tasks
 * through every node, the leader ({@code synapse-hub mesh status}) is killed with SIGKILL three
 * times, and restarted on its storage each time. Checked: a claim through a survivor is granted
 * after each kill, the load keeps being granted on the survivors, no task ever has two sure
 * owners at once and epochs only grow, every acknowledged claim is in the final state of every
 * node unless its owner released it, no acknowledged release is undone, and every node, the
 * restarted ones included, converges on the same claims.
 */
@Timeout(value = 15, unit = TimeUnit.MINUTES)
class MeshProcessTest {
    /** Generous: three JVMs, a Raft election and the test share two loaded cores. */
    static final Duration WAIT = Duration.ofSeconds(120);
    static final Duration OP_TIMEOUT = Duration.ofSeconds(20);
    static final int KILLS = 3;
    static final int AGENTS = 3;
    static final int MAX_OPS = 5_000;
    static final List<String> TASKS = List.of("T-0", "T-1", "T-2", "T-3", "T-4", "T-5", "T-6", "T-7", "T-8");
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;
    private final Closer open = new Closer();

    @AfterEach
    void stop() throws Exception {
        open.close();
    }

    private <T extends AutoCloseable> T keep(T c) {
        return open.keep(c);
    }

    enum Kind { CLAIM, RELEASE }

    enum Result { GRANTED, DENIED, UNKNOWN }

    /** One invocation and its reply; times are this JVM's nanoTime. */
    record Op(String agent, Kind kind, String task, long epochArg, long invoked, long returned, Result result,
              long epoch) {
        boolean granted() {
            return result == Result.GRANTED;
        }
    }

    /** The cluster as the test sees it: which nodes are up, and their processes. */
    static final class Cluster {
        final Map<String, HubProcess> nodes = new LinkedHashMap<>();
        final Set<String> up = java.util.concurrent.ConcurrentHashMap.newKeySet();
        final TestCertificates.Identity server = TestCertificates.selfSigned("mesh-node");
        String peers;

        List<URI> upUrls() {
            List<URI> out = new ArrayList<>();
            nodes.forEach((id, p) -> {
                if (up.contains(id)) {
                    out.add(URI.create(p.url()));
                }
            });
            return out;
        }

        HubClient agent(HubProcess node, String name) throws Exception {
            HubClient c = HubClient.connect(URI.create(node.url()), WAIT, ClientTls.pinned(server.pin()));
            c.register(name, null, WAIT);
            return c;
        }
    }

    @Test
    void killingTheLeaderProcessAgainAndAgainLosesNoAcknowledgedClaimAndGrantsNothingTwice() throws Exception {
        Cluster cluster = new Cluster();
        cluster.server.write(dir, "server");
        Set<Integer> taken = new LinkedHashSet<>();
        Map<String, Integer> raftPorts = new LinkedHashMap<>();
        Map<String, Integer> wsPorts = new LinkedHashMap<>();
        for (String id : List.of("n1", "n2", "n3")) {
            raftPorts.put(id, distinctPort(taken));
            wsPorts.put(id, distinctPort(taken));
        }
        List<String> peerList = new ArrayList<>();
        raftPorts.forEach((id, p) -> peerList.add(id + "=127.0.0.1:" + p));
        cluster.peers = String.join(",", peerList);
        for (String id : raftPorts.keySet()) {
            cluster.nodes.put(id, keep(new HubProcess(id, wsPorts.get(id), dir.resolve(id + ".log"), List.of(
                    "--db", dir.resolve(id + ".db").toString(), "--mesh-id", id, "--mesh-peers", cluster.peers, "--mesh-bootstrap",
                    "--tls-certfile", dir.resolve("server.pem").toString(),
                    "--tls-keyfile", dir.resolve("server.key").toString()))));
        }
        // each node waits to catch up with a leader before it serves: start them together
        for (HubProcess p : cluster.nodes.values()) {
            p.start();
        }
        for (Map.Entry<String, HubProcess> e : cluster.nodes.entrySet()) {
            e.getValue().awaitHealthy();
            cluster.up.add(e.getKey());
        }
        awaitStatus(cluster, s -> allReachable(s, 3));

        List<Op> history = new CopyOnWriteArrayList<>();
        List<Agent> agents = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < AGENTS; i++) {
            Agent a = new Agent("agent-" + i, i, cluster, history, 1000L + i);
            agents.add(a);
            Thread t = new Thread(a, a.name);
            t.setDaemon(true);
            threads.add(t);
            t.start();
        }
        List<String> probes = new ArrayList<>();
        try {
            awaitGrantsAfter(history, System.nanoTime() - WAIT.toNanos(), 5, agents);
            for (int round = 1; round <= KILLS; round++) {
                JsonNode before = awaitStatus(cluster, s -> allReachable(s, 3) && !s.path("leader").isNull());
                String leader = before.path("leader").asText();
                long term = maxTerm(before);
                HubProcess victim = cluster.nodes.get(leader);
                cluster.up.remove(leader);
                victim.kill(); // SIGKILL: no shutdown path runs
                long killedAt = System.nanoTime();

                // the survivors elect another leader in a later term
                JsonNode after = awaitStatus(cluster, s -> !s.path("leader").isNull()
                        && !leader.equals(s.path("leader").asText()) && maxTerm(s) > term);
                assertThat(after.path("leader").asText()).isNotEqualTo(leader);

                // an agent on the surviving follower is granted a fresh claim (forwarded to the new
                // leader), and the load goes on being granted
                String newLeader = after.path("leader").asText();
                String survivor = cluster.up.stream().filter(id -> !id.equals(newLeader)).findFirst().orElseThrow();
                String probeTask = "after-kill-" + round;
                probes.add(probeTask + " probe-" + round);
                try (HubClient probe = cluster.agent(cluster.nodes.get(survivor), "probe-" + round)) {
                    ObjectNode granted = claimUntilGranted(probe, "probe-" + round, probeTask, history);
                    assertThat(granted.path("owner").asText()).isEqualTo("probe-" + round);
                }
                awaitGrantsAfter(history, killedAt, 3, agents);

                // the killed node comes back on its own storage and serves again
                victim.start().awaitHealthy();
                cluster.up.add(leader);
                awaitStatus(cluster, s -> allReachable(s, 3));
            }
        } finally {
            agents.forEach(Agent::stop);
            for (Thread t : threads) {
                t.join(WAIT.toMillis());
            }
        }
        for (Agent a : agents) {
            assertThat(a.failure).as(a.name + " failed").isNull();
            assertThat(threads.get(agents.indexOf(a)).isAlive()).as(a.name + " still running").isFalse();
        }

        // every node, the restarted ones included, converges on the same claims
        Map<String, Map<String, Long>> finalStates = awaitConverged(cluster);
        Map<String, Long> state = finalStates.values().iterator().next();

        List<Op> ops = new ArrayList<>(history);
        System.out.printf("mesh processes: %d leader kills, %d operations, %d granted, %d unknown outcomes%n", KILLS,
                ops.size(), ops.stream().filter(Op::granted).count(),
                ops.stream().filter(o -> o.result() == Result.UNKNOWN).count());
        assertThat(ops.stream().filter(Op::granted).count()).as("the load was granted").isGreaterThan(20);
        assertThat(violations(ops)).as("history checked against one hub").isEmpty();
        assertThat(lost(ops, state)).as("acknowledged claims and releases in the final state").isEmpty();
        for (String probe : probes) {
            assertThat(state).as("the claim granted through a survivor").containsKey(probe);
        }
    }

    @Test
    void theChecksFlagTwoOwnersAnEpochGoingBackALostClaimAndAnUndoneRelease() {
        List<Op> clean = List.of(new Op("a", Kind.CLAIM, "T", 0, 1, 2, Result.GRANTED, 5),
                new Op("a", Kind.RELEASE, "T", 5, 3, 4, Result.GRANTED, 0),
                new Op("b", Kind.CLAIM, "T", 0, 5, 6, Result.GRANTED, 7),
                new Op("c", Kind.CLAIM, "T", 0, 5, 8, Result.UNKNOWN, 0));
        assertThat(violations(clean)).isEmpty();
        assertThat(lost(clean, Map.of("T b", 7L))).isEmpty();

        List<Op> twice = List.of(new Op("a", Kind.CLAIM, "T", 0, 1, 2, Result.GRANTED, 5),
                new Op("b", Kind.CLAIM, "T", 0, 3, 4, Result.GRANTED, 6));
        assertThat(violations(twice)).anyMatch(v -> v.startsWith("two owners of T"));
        List<Op> back = List.of(new Op("a", Kind.CLAIM, "T", 0, 1, 2, Result.GRANTED, 5),
                new Op("a", Kind.RELEASE, "T", 5, 3, 4, Result.GRANTED, 0),
                new Op("b", Kind.CLAIM, "T", 0, 5, 6, Result.GRANTED, 5));
        assertThat(violations(back)).anyMatch(v -> v.startsWith("epoch went back on T"));
        assertThat(lost(clean, Map.of())).containsExactly("acknowledged claim of T by b@7 is not in the final state");
        assertThat(lost(clean, Map.of("T a", 5L, "T b", 7L)))
                .containsExactly("acknowledged release of T@5 by a is undone in the final state");
    }

    // ---- the load ----

    /**
     * Claims a random contended task, then releases it, with an idem_key on every request and a
     * short pause between operations. An outcome it cannot learn (an error such as commit_unknown,
     * busy or queued, a timeout, a dropped connection) is recorded UNKNOWN; it then reconnects to
     * a node that is up and asks once more under the same key. Bounded by {@link #MAX_OPS} and a
     * stop flag.
     */
    static final class Agent implements Runnable {
        final String name;
        private final Cluster cluster;
        private final List<Op> history;
        private final Random random;
        private int preferred;
        private long seq;
        private HubClient client;
        private volatile boolean stop;
        volatile Throwable failure;

        Agent(String name, int preferred, Cluster cluster, List<Op> history, long seed) {
            this.name = name;
            this.preferred = preferred;
            this.cluster = cluster;
            this.history = history;
            this.random = new Random(seed);
        }

        void stop() {
            stop = true;
        }

        @Override
        public void run() {
            try {
                for (int ops = 0; !stop && ops < MAX_OPS; ops++) {
                    String task = TASKS.get(random.nextInt(TASKS.size()));
                    Op claim = perform(Kind.CLAIM, task, 0);
                    if (claim != null && claim.granted()) {
                        perform(Kind.RELEASE, task, claim.epoch());
                    }
                    TimeUnit.MILLISECONDS.sleep(20); // pacing: a bounded load, not a saturating one
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (RuntimeException | Error e) {
                failure = e;
            } finally {
                disconnect();
            }
        }

        /** Sends, records, and on an unknown outcome reconnects and asks once more under the same key. */
        private Op perform(Kind kind, String task, long epoch) throws InterruptedException {
            ObjectNode f = JSON.createObjectNode();
            f.put("sender", name);
            f.put("target", "System");
            f.put("type", kind == Kind.CLAIM ? "claim" : "release");
            f.put("payload", "");
            f.put("task_id", task);
            f.put("idem_key", name + "-" + (++seq));
            if (kind == Kind.RELEASE) {
                f.put("epoch", epoch);
            } else {
                f.putArray("paths").add("src/" + task); // one file scope per task: tasks contend by id only
            }
            String granted = kind == Kind.CLAIM ? "claim_granted" : "release_granted";
            String denied = kind == Kind.CLAIM ? "claim_denied" : "release_denied";
            // decided after it was first sent (one clock on this machine), and a retry replays that
            // first answer: an older frame is a late publication of an earlier decision
            double notBefore = System.currentTimeMillis() / 1000.0 - 0.001;
            Op op = null;
            for (int attempt = 0; attempt < 2 && !stop; attempt++) {
                if (!connected()) {
                    return op;
                }
                long invoked = System.nanoTime();
                Result result;
                long grantedEpoch = 0;
                client.clearPending();
                client.send(f);
                try {
                    ObjectNode r = client.awaitWhileOpen(m -> "error".equals(m.path("type").asText())
                            || task.equals(m.path("task_id").asText()) && m.path("timestamp").asDouble() >= notBefore
                            && (granted.equals(m.path("type").asText()) && name.equals(m.path("owner").asText())
                            || denied.equals(m.path("type").asText())), OP_TIMEOUT);
                    if (granted.equals(r.path("type").asText())) {
                        result = Result.GRANTED;
                        grantedEpoch = r.path("epoch").asLong();
                    } else if (denied.equals(r.path("type").asText())) {
                        result = Result.DENIED;
                    } else {
                        result = Result.UNKNOWN;
                    }
                } catch (TimeoutException | RuntimeException e) {
                    result = Result.UNKNOWN;
                }
                op = new Op(name, kind, task, epoch, invoked, System.nanoTime(), result, grantedEpoch);
                history.add(op);
                if (result != Result.UNKNOWN) {
                    return op;
                }
                disconnect();
            }
            return op;
        }

        /** Connects to a node that is up (its preferred one first), within {@link #WAIT}; false when stopped. */
        private boolean connected() throws InterruptedException {
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (!stop && (client == null || !client.isOpen())) {
                disconnect();
                List<URI> urls = cluster.upUrls();
                if (!urls.isEmpty()) {
                    URI url = urls.get(Math.floorMod(preferred, urls.size()));
                    try {
                        client = HubClient.connect(url, OP_TIMEOUT, ClientTls.pinned(cluster.server.pin()));
                        client.register(name, null, OP_TIMEOUT);
                        return true;
                    } catch (Exception unreachable) {
                        disconnect();
                        preferred++; // try another node next
                    }
                }
                if (System.nanoTime() > deadline) {
                    throw new AssertionError(name + " found no node to connect to within " + WAIT);
                }
                TimeUnit.MILLISECONDS.sleep(200); // a pause between connection attempts
            }
            return !stop;
        }

        private void disconnect() {
            if (client != null) {
                client.close();
                client = null;
            }
        }
    }

    // ---- the checks: the single-hub model, using only what the replies prove ----

    /** A surely-held ownership: from the grant's reply until its owner next invoked a release or claim of the task. */
    record Window(String task, String owner, long epoch, long start, long end) {
    }

    static List<Window> windows(List<Op> ops) {
        List<Window> out = new ArrayList<>();
        for (Op op : ops) {
            if (op.kind() != Kind.CLAIM || !op.granted()) {
                continue;
            }
            long end = Long.MAX_VALUE;
            for (Op later : ops) {
                if (later.agent().equals(op.agent()) && later.task().equals(op.task()) && later.invoked() > op.invoked()) {
                    end = Math.min(end, later.invoked());
                }
            }
            out.add(new Window(op.task(), op.agent(), op.epoch(), op.returned(), end));
        }
        return out;
    }

    /** No two owners of a task at once, and epochs only grow (strictly for another owner). */
    static List<String> violations(List<Op> ops) {
        List<String> out = new ArrayList<>();
        List<Window> w = windows(ops);
        for (int i = 0; i < w.size(); i++) {
            for (int j = i + 1; j < w.size(); j++) {
                Window a = w.get(i);
                Window b = w.get(j);
                if (a.task().equals(b.task()) && !a.owner().equals(b.owner()) && a.start() < b.end()
                        && b.start() < a.end()) {
                    out.add("two owners of " + a.task() + ": " + a.owner() + "@" + a.epoch() + " and " + b.owner() + "@"
                            + b.epoch());
                }
            }
        }
        for (Op first : ops) {
            for (Op second : ops) {
                if (first.kind() != Kind.CLAIM || second.kind() != Kind.CLAIM || !first.granted() || !second.granted()
                        || !first.task().equals(second.task()) || first.returned() >= second.invoked()) {
                    continue;
                }
                boolean sameOwner = first.agent().equals(second.agent());
                if (second.epoch() < first.epoch() || !sameOwner && second.epoch() == first.epoch()) {
                    out.add("epoch went back on " + first.task() + ": " + first.agent() + "@" + first.epoch()
                            + " was granted before " + second.agent() + "@" + second.epoch() + " was asked for");
                }
            }
        }
        return out;
    }

    /**
     * Acknowledged claims missing from the final state although their owner never asked to end
     * them (no later release or claim of the task), and acknowledged releases undone (the released
     * epoch still held by its owner).
     */
    static List<String> lost(List<Op> ops, Map<String, Long> state) {
        List<String> out = new ArrayList<>();
        for (Window w : windows(ops)) {
            if (w.end() == Long.MAX_VALUE && !Long.valueOf(w.epoch()).equals(state.get(w.task() + " " + w.owner()))) {
                out.add("acknowledged claim of " + w.task() + " by " + w.owner() + "@" + w.epoch()
                        + " is not in the final state");
            }
        }
        for (Op op : ops) {
            if (op.kind() == Kind.RELEASE && op.granted()
                    && Long.valueOf(op.epochArg()).equals(state.get(op.task() + " " + op.agent()))) {
                out.add("acknowledged release of " + op.task() + "@" + op.epochArg() + " by " + op.agent()
                        + " is undone in the final state");
            }
        }
        return out;
    }

    // ---- helpers ----

    static int distinctPort(Set<Integer> taken) throws Exception {
        int p;
        do {
            p = HubProcess.freePort();
        } while (!taken.add(p));
        return p;
    }

    /** Runs {@code synapse-hub mesh status --json} until {@code condition} holds; returns that report. */
    static JsonNode awaitStatus(Cluster cluster, Predicate<JsonNode> condition) throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        String last = "no report yet";
        while (System.nanoTime() < deadline) {
            CliTest.Run status = CliTest.run("mesh", "status", "--mesh-peers", cluster.peers, "--json", "--timeout", "5");
            last = status.code() + " " + status.out() + status.err();
            if (!status.out().isBlank()) {
                JsonNode report = JSON.readTree(status.out());
                if (status.code() == ExitCodes.OK && condition.test(report)) {
                    return report;
                }
            }
            TimeUnit.MILLISECONDS.sleep(200); // a pause between polls, not a wait for an outcome
        }
        throw new AssertionError("mesh status never matched within " + WAIT + "; last " + last);
    }

    static boolean allReachable(JsonNode status, int voters) {
        int reachable = 0;
        for (JsonNode n : status.path("nodes")) {
            if (n.path("reachable").asBoolean()) {
                reachable++;
            }
        }
        return reachable == voters;
    }

    static long maxTerm(JsonNode status) {
        long term = -1;
        for (JsonNode n : status.path("nodes")) {
            term = Math.max(term, n.path("term").asLong(-1));
        }
        return term;
    }

    /** Waits until at least {@code count} operations granted after {@code since} are recorded. */
    static void awaitGrantsAfter(List<Op> history, long since, int count, List<Agent> agents)
            throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() < deadline) {
            long n = history.stream().filter(o -> o.granted() && o.invoked() > since).count();
            if (n >= count) {
                return;
            }
            for (Agent a : agents) {
                assertThat(a.failure).as(a.name + " failed").isNull();
            }
            TimeUnit.MILLISECONDS.sleep(100); // a pause between looks at the history
        }
        throw new AssertionError("fewer than " + count + " operations were granted within " + WAIT);
    }

    /** Claims {@code task} under one idem_key until granted (the mesh may be electing), within {@link #WAIT}. */
    static ObjectNode claimUntilGranted(HubClient agent, String name, String task, List<Op> history)
            throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        String last = "no reply yet";
        double notBefore = System.currentTimeMillis() / 1000.0 - 0.001;
        while (System.nanoTime() < deadline) {
            ObjectNode f = agent.frame(name, "claim");
            f.put("task_id", task);
            f.putArray("paths").add("probe/" + task);
            f.put("idem_key", name + "-" + task);
            agent.clearPending();
            long invoked = System.nanoTime();
            agent.send(f);
            ObjectNode r = agent.await(m -> "error".equals(m.path("type").asText())
                    || task.equals(m.path("task_id").asText()) && m.path("timestamp").asDouble() >= notBefore
                    && ("claim_granted".equals(m.path("type").asText()) || "claim_denied".equals(m.path("type").asText())),
                    OP_TIMEOUT);
            last = r.toString();
            if ("claim_granted".equals(r.path("type").asText())) {
                history.add(new Op(name, Kind.CLAIM, task, 0, invoked, System.nanoTime(), Result.GRANTED,
                        r.path("epoch").asLong()));
                return r;
            }
            assertThat(r.path("type").asText()).as("nobody else claims " + task + ": " + r).isEqualTo("error");
            TimeUnit.MILLISECONDS.sleep(300); // a pause between retries, not a wait for an outcome
        }
        throw new AssertionError("the claim through a survivor was not granted within " + WAIT + "; last " + last);
    }

    /**
     * Asks every node for its claims until all three hold the same ones and no node has a queued
     * intent left; returns each node's claims as "task owner" -> epoch.
     */
    private static Map<String, Map<String, Long>> awaitConverged(Cluster cluster) throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        Map<String, Map<String, Long>> states = new LinkedHashMap<>();
        List<HubClient> readers = new ArrayList<>();
        try {
            for (Map.Entry<String, HubProcess> e : cluster.nodes.entrySet()) {
                readers.add(cluster.agent(e.getValue(), "reader-" + e.getKey()));
            }
            while (System.nanoTime() < deadline) {
                JsonNode status = awaitStatus(cluster, s -> allReachable(s, 3));
                states.clear();
                int i = 0;
                for (String id : cluster.nodes.keySet()) {
                    HubClient reader = readers.get(i++);
                    reader.clearPending();
                    reader.send(reader.frame("reader-" + id, "state_request"));
                    ObjectNode snapshot = reader.awaitType("state_snapshot", OP_TIMEOUT);
                    Map<String, Long> claims = new LinkedHashMap<>();
                    for (JsonNode c : snapshot.path("snapshot").path("active_claims")) {
                        claims.put(c.path("task_id").asText() + " " + c.path("owner").asText(), c.path("epoch").asLong());
                    }
                    states.put(id, claims);
                }
                if (status.path("queue_depth").asInt(-1) == 0 && new LinkedHashSet<>(states.values()).size() == 1) {
                    return states;
                }
                TimeUnit.MILLISECONDS.sleep(300); // a pause between polls
            }
        } finally {
            readers.forEach(HubClient::close);
        }
        throw new AssertionError("the nodes did not converge within " + WAIT + ": " + states);
    }
}
