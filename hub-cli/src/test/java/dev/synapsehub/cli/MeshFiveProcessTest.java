package dev.synapsehub.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static dev.synapsehub.cli.MeshProcessTest.OP_TIMEOUT;
import static dev.synapsehub.cli.MeshProcessTest.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Five mesh nodes as five separate {@code synapse-hub} processes. Under the durable load of
 * {@link MeshProcessTest} (agents claiming and releasing contended tasks with an {@code idem_key}
 * through every node), the leader {@code mesh status} names is killed with SIGKILL, then the
 * next one: two of five voters gone, the other three still form a quorum and keep granting. The
 * same checks against the single-hub model: no task with two sure owners at once, epochs only
 * grow, every acknowledged claim is in the final state of every survivor unless its owner ended
 * it, no acknowledged release undone, and the survivors converge with no queued intent left.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class MeshFiveProcessTest {
    static final List<String> IDS = List.of("n1", "n2", "n3", "n4", "n5");
    static final int KILLS = 2;
    static final int AGENTS = 3;
    /** Five node JVMs and the test share two cores: a start may take a few minutes on a loaded host. */
    static final java.time.Duration START = java.time.Duration.ofMinutes(4);

    @TempDir
    Path dir;
    private final Closer open = new Closer();

    @AfterEach
    void stop() throws Exception {
        open.close();
    }

    @Test
    void killingTheLeaderOfFiveProcessesTwiceLosesNoAcknowledgedClaimAndGrantsNothingTwice() throws Exception {
        MeshProcessTest.Cluster cluster = new MeshProcessTest.Cluster();
        cluster.server.write(dir, "server");
        Set<Integer> taken = new LinkedHashSet<>();
        Map<String, Integer> raftPorts = new LinkedHashMap<>();
        Map<String, Integer> wsPorts = new LinkedHashMap<>();
        for (String id : IDS) {
            raftPorts.put(id, MeshProcessTest.distinctPort(taken));
            wsPorts.put(id, MeshProcessTest.distinctPort(taken));
        }
        List<String> peerList = new ArrayList<>();
        raftPorts.forEach((id, p) -> peerList.add(id + "=127.0.0.1:" + p));
        cluster.peers = String.join(",", peerList);
        for (String id : IDS) {
            cluster.nodes.put(id, open.keep(new HubProcess(id, wsPorts.get(id), dir.resolve(id + ".log"), List.of(
                    "--db", dir.resolve(id + ".db").toString(), "--mesh-id", id, "--mesh-peers", cluster.peers, "--mesh-bootstrap",
                    "--tls-certfile", dir.resolve("server.pem").toString(),
                    "--tls-keyfile", dir.resolve("server.key").toString()))));
        }
        for (HubProcess p : cluster.nodes.values()) {
            p.start(); // each node waits to catch up with a leader before it serves: start them together
        }
        for (Map.Entry<String, HubProcess> e : cluster.nodes.entrySet()) {
            e.getValue().awaitHealthy(START); // five JVMs on two cores: each serves once it caught up with a leader
            cluster.up.add(e.getKey());
        }
        MeshProcessTest.awaitStatus(cluster, s -> MeshProcessTest.allReachable(s, IDS.size()));

        List<MeshProcessTest.Op> history = new CopyOnWriteArrayList<>();
        List<MeshProcessTest.Agent> agents = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < AGENTS; i++) {
            MeshProcessTest.Agent a = new MeshProcessTest.Agent("agent-" + i, i, cluster, history, 2000L + i);
            agents.add(a);
            Thread t = new Thread(a, a.name);
            t.setDaemon(true);
            threads.add(t);
            t.start();
        }
        List<String> killed = new ArrayList<>();
        try {
            MeshProcessTest.awaitGrantsAfter(history, System.nanoTime() - WAIT.toNanos(), 5, agents);
            for (int round = 1; round <= KILLS; round++) {
                int alive = cluster.up.size();
                JsonNode before = MeshProcessTest.awaitStatus(cluster, s -> MeshProcessTest.allReachable(s, alive)
                        && !s.path("leader").isNull());
                String leader = before.path("leader").asText();
                long term = MeshProcessTest.maxTerm(before);
                cluster.up.remove(leader);
                cluster.nodes.get(leader).kill(); // SIGKILL: no shutdown path runs, and it stays down
                killed.add(leader);
                long killedAt = System.nanoTime();

                JsonNode after = MeshProcessTest.awaitStatus(cluster, s -> !s.path("leader").isNull()
                        && !killed.contains(s.path("leader").asText()) && MeshProcessTest.maxTerm(s) > term);
                assertThat(after.path("leader").asText()).isNotIn(killed);
                MeshProcessTest.awaitGrantsAfter(history, killedAt, 3, agents);
            }
        } finally {
            agents.forEach(MeshProcessTest.Agent::stop);
            for (Thread t : threads) {
                t.join(WAIT.toMillis());
            }
        }
        for (int i = 0; i < agents.size(); i++) {
            assertThat(agents.get(i).failure).as(agents.get(i).name + " failed").isNull();
            assertThat(threads.get(i).isAlive()).as(agents.get(i).name + " still running").isFalse();
        }
        assertThat(cluster.up).as("three of five voters left: still a quorum").hasSize(IDS.size() - KILLS);

        Map<String, Map<String, Long>> finals = awaitSurvivorsConverged(cluster);
        Map<String, Long> state = finals.values().iterator().next();
        List<MeshProcessTest.Op> ops = new ArrayList<>(history);
        System.out.printf("mesh of five processes: %d leader kills, %d operations, %d granted, %d unknown%n", KILLS,
                ops.size(), ops.stream().filter(MeshProcessTest.Op::granted).count(),
                ops.stream().filter(o -> o.result() == MeshProcessTest.Result.UNKNOWN).count());
        assertThat(ops.stream().filter(MeshProcessTest.Op::granted).count()).as("the load was granted")
                .isGreaterThan(10);
        assertThat(MeshProcessTest.violations(ops)).as("history checked against one hub").isEmpty();
        assertThat(MeshProcessTest.lost(ops, state)).as("acknowledged claims and releases in the final state")
                .isEmpty();
    }

    /**
     * Asks every surviving node for its claims until all hold the same ones and no survivor has a
     * queued intent left; returns each one's claims as "task owner" -> epoch.
     */
    static Map<String, Map<String, Long>> awaitSurvivorsConverged(MeshProcessTest.Cluster cluster) throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        Map<String, Map<String, Long>> states = new LinkedHashMap<>();
        Map<String, HubClient> readers = new LinkedHashMap<>();
        try {
            for (String id : cluster.up) {
                readers.put(id, cluster.agent(cluster.nodes.get(id), "reader-" + id));
            }
            while (System.nanoTime() < deadline) {
                JsonNode status = MeshProcessTest.awaitStatus(cluster,
                        s -> MeshProcessTest.allReachable(s, cluster.up.size()));
                states.clear();
                for (Map.Entry<String, HubClient> r : readers.entrySet()) {
                    HubClient reader = r.getValue();
                    reader.clearPending();
                    reader.send(reader.frame("reader-" + r.getKey(), "state_request"));
                    ObjectNode snapshot = reader.awaitType("state_snapshot", OP_TIMEOUT);
                    Map<String, Long> claims = new LinkedHashMap<>();
                    for (JsonNode c : snapshot.path("snapshot").path("active_claims")) {
                        claims.put(c.path("task_id").asText() + " " + c.path("owner").asText(), c.path("epoch").asLong());
                    }
                    states.put(r.getKey(), claims);
                }
                if (status.path("queue_depth").asInt(-1) == 0 && new LinkedHashSet<>(states.values()).size() == 1) {
                    return states;
                }
                TimeUnit.MILLISECONDS.sleep(300); // a pause between polls
            }
        } finally {
            readers.values().forEach(HubClient::close);
        }
        throw new AssertionError("the survivors did not converge within " + WAIT + ": " + states);
    }
}
