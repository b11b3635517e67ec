package dev.synapsehub.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.mesh.LoopbackProxy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static dev.synapsehub.cli.MeshProcessTest.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A minority partition between separate {@code synapse-hub} processes (seed 001 §7 step 4, §9,
 * §12): three node processes reach each other's Raft ports only through one loopback TCP proxy
 * per ordered pair ({@link LoopbackProxy}; each node's {@code --mesh-peers} names itself directly
 * and the others through its own proxies). Cutting every link of a follower leaves it running
 * alone: its reads are labelled stale, a claim taken there is answered {@code queued} and grants
 * nothing while the majority goes on granting; once healed the node catches up, replays the
 * intent ({@code intent_reconciled}, {@code applied}) and every node holds the same claims.
 */
@Timeout(value = 8, unit = TimeUnit.MINUTES)
class MeshPartitionProcessTest {
    static final List<String> IDS = List.of("n1", "n2", "n3");
    static final Duration OP = Duration.ofSeconds(30);

    @TempDir
    Path dir;
    private final Closer open = new Closer();

    @AfterEach
    void stop() throws Exception {
        open.close();
    }

    private static String link(String from, String to) {
        return from + ">" + to;
    }

    private static ObjectNode claim(HubClient agent, String name, String task) {
        ObjectNode f = agent.frame(name, "claim");
        f.put("task_id", task);
        f.putArray("paths").add("part/" + task);
        return f;
    }

    /** The staleness block of a state read on {@code reader}'s node. */
    private static JsonNode staleness(HubClient reader, String name) throws Exception {
        reader.clearPending();
        reader.send(reader.frame(name, "state_request"));
        return reader.awaitType("state_snapshot", OP).path("staleness");
    }

    private static boolean stale(HubClient reader, String name) throws Exception {
        return staleness(reader, name).path("isStale").asBoolean(false);
    }

    @Test
    void aFollowerProcessCutOffByItsProxiesQueuesLabelsItsReadsStaleAndReconcilesOnHeal() throws Exception {
        MeshProcessTest.Cluster cluster = new MeshProcessTest.Cluster();
        cluster.server.write(dir, "server");
        Set<Integer> taken = new LinkedHashSet<>();
        Map<String, Integer> raftPorts = new LinkedHashMap<>();
        Map<String, Integer> wsPorts = new LinkedHashMap<>();
        for (String id : IDS) {
            raftPorts.put(id, MeshProcessTest.distinctPort(taken));
            wsPorts.put(id, MeshProcessTest.distinctPort(taken));
        }
        Map<String, LoopbackProxy> links = new LinkedHashMap<>();
        for (String from : IDS) {
            for (String to : IDS) {
                if (!from.equals(to)) {
                    links.put(link(from, to), open.keep(new LoopbackProxy(link(from, to), raftPorts.get(to), taken)));
                }
            }
        }
        List<String> direct = new ArrayList<>();
        raftPorts.forEach((id, p) -> direct.add(id + "=127.0.0.1:" + p));
        cluster.peers = String.join(",", direct); // what mesh status asks: every voter directly
        for (String id : IDS) {
            List<String> view = new ArrayList<>();
            for (String peer : IDS) {
                int port = peer.equals(id) ? raftPorts.get(peer) : links.get(link(id, peer)).port();
                view.add(peer + "=127.0.0.1:" + port);
            }
            cluster.nodes.put(id, open.keep(new HubProcess(id, wsPorts.get(id), dir.resolve(id + ".log"), List.of(
                    "--db", dir.resolve(id + ".db").toString(), "--mesh-id", id, "--mesh-peers", String.join(",", view),
                    "--mesh-bootstrap",
                    "--mesh-commit-timeout", "2",
                    "--tls-certfile", dir.resolve("server.pem").toString(),
                    "--tls-keyfile", dir.resolve("server.key").toString()))));
        }
        for (HubProcess p : cluster.nodes.values()) {
            p.start();
        }
        for (Map.Entry<String, HubProcess> e : cluster.nodes.entrySet()) {
            e.getValue().awaitHealthy();
            cluster.up.add(e.getKey());
        }
        JsonNode status = MeshProcessTest.awaitStatus(cluster, s -> MeshProcessTest.allReachable(s, 3)
                && !s.path("leader").isNull());
        String leader = status.path("leader").asText();
        String taker = IDS.stream().filter(id -> !id.equals(leader)).findFirst().orElseThrow();

        HubClient bob = open.keep(cluster.agent(cluster.nodes.get(taker), "bob"));
        HubClient carol = open.keep(cluster.agent(cluster.nodes.get(leader), "carol"));
        bob.clearPending();
        bob.send(claim(bob, "bob", "P-0"));
        assertThat(bob.awaitType("claim_granted", OP).path("task_id").asText())
                .as("the follower serves through its proxies").isEqualTo("P-0");
        await("the taker reads as fresh", () -> !stale(bob, "bob"));

        // cut every link to and from the taker: it keeps running, alone
        links.forEach((k, proxy) -> {
            if (k.startsWith(taker + ">") || k.endsWith(">" + taker)) {
                proxy.cut();
            }
        });
        await("the cut-off node labels its reads stale", () -> stale(bob, "bob"));

        bob.clearPending();
        bob.send(claim(bob, "bob", "P-1"));
        ObjectNode queued = bob.await(m -> "error".equals(m.path("type").asText())
                || "claim_granted".equals(m.path("type").asText()), OP);
        assertThat(queued.path("error_code").asText()).as(queued.toString()).isEqualTo("queued");
        String payload = queued.path("payload").asText();
        assertThat(payload).contains("queued as intent").contains("grants nothing");
        String intentId = payload.replaceAll("(?s).*queued as intent ([0-9a-f-]{36}).*", "$1");
        JsonNode cutOff = staleness(bob, "bob");
        assertThat(cutOff.path("queueDepth").asInt()).as(cutOff.toString()).isEqualTo(1);
        assertThat(cutOff.path("isStale").asBoolean()).isTrue();

        // the majority goes on granting meanwhile
        carol.clearPending();
        carol.send(claim(carol, "carol", "P-2"));
        assertThat(carol.awaitType("claim_granted", OP).path("owner").asText()).isEqualTo("carol");

        links.values().forEach(LoopbackProxy::heal);
        ObjectNode reconciled = bob.await(m -> "intent_reconciled".equals(m.path("type").asText()), WAIT);
        assertThat(reconciled.path("intent_id").asText()).isEqualTo(intentId);
        assertThat(reconciled.path("outcome").asText()).as(reconciled.toString()).isEqualTo("applied");
        assertThat(reconciled.path("task_id").asText()).isEqualTo("P-1");
        await("the healed node reads as fresh", () -> !stale(bob, "bob"));

        // every node holds the same claims: the queued one, and the one granted while it was cut off
        Map<String, Map<String, Long>> states = MeshFiveProcessTest.awaitSurvivorsConverged(cluster);
        assertThat(states.values().iterator().next().keySet()).containsExactlyInAnyOrder("P-0 bob", "P-1 bob",
                "P-2 carol");
    }

    /** A condition over the wire, polled (each poll is a request/reply) until it holds within {@link #WAIT}. */
    private interface Check {
        boolean holds() throws Exception;
    }

    private static void await(String what, Check check) throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!check.holds()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("timed out waiting until " + what);
            }
            TimeUnit.MILLISECONDS.sleep(200); // a pause between polls
        }
    }
}
