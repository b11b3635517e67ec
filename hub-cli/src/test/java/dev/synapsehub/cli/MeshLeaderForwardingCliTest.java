package dev.synapsehub.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.client.tls.ClientTls;
import dev.synapsehub.client.tls.TestCertificates;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A mesh forwards its agents' claims in another hub's namespace over one link, held by its
 * leader (docs/mesh.md, "Forwarding claims to other owning hubs"): the owner sees one connection
 * from the cluster, every node's forwards are answered by the owner whatever their number, and a
 * keyed retry through another node after the leader is killed is answered from the owner's ledger.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class MeshLeaderForwardingCliTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final int PER_NODE = 20;

    @TempDir
    Path dir;
    private final List<LoopbackHub> hubs = new CopyOnWriteArrayList<>();
    private TestCertificates.Identity ownerServer;
    private TestCertificates.PemPair meshClientFiles;
    private TestCertificates.PemPair observerFiles;
    private URI ownerUri;
    private int ownerPort;

    @AfterEach
    void stop() throws Exception {
        for (LoopbackHub h : hubs) {
            h.close();
        }
    }

    @Test
    void forwardsOfAllThreeNodesAtOnceAreEachAnsweredByTheOwnerOverTheLeadersOneLink() throws Exception {
        startOwner();
        List<HubDaemon> nodes = startCluster();

        // hub-a's own agent holds every fifth task first: those forwards must be denied by the owner
        Set<String> held = new HashSet<>();
        try (HubClient dave = HubClient.connect(ownerUri, WAIT, ClientTls.pinned(ownerServer.pin()))) {
            dave.register("lab/dave", null, WAIT);
            for (int i = 0; i < 3; i++) {
                for (int t = 0; t < PER_NODE; t += 5) {
                    String task = task(i, t);
                    ObjectNode g = FederationProcessTest.claim(dave, "lab/dave", task, "src/" + task);
                    assertThat(g.path("type").asText()).as(g.toString()).isEqualTo("claim_granted");
                    held.add(task);
                }
            }
        }

        // an agent on each node sends its twenty claims at once, all three nodes together
        double termBefore = term(nodes);
        List<HubClient> crowd = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            crowd.add(agent(nodes.get(i), "lab/crowd-" + i));
        }
        for (int i = 0; i < 3; i++) {
            for (int t = 0; t < PER_NODE; t++) {
                String task = task(i, t);
                ObjectNode f = crowd.get(i).frame("lab/crowd-" + i, "claim");
                f.put("task_id", task);
                f.putArray("paths").add("src/" + task);
                crowd.get(i).send(f);
            }
        }
        Map<String, Long> epochs = new HashMap<>();
        for (int i = 0; i < 3; i++) {
            for (int t = 0; t < PER_NODE; t++) {
                String task = task(i, t);
                ObjectNode outcome = crowd.get(i).await(r -> task.equals(r.path("task_id").asText())
                        && ("claim_granted".equals(r.path("type").asText())
                        || "claim_denied".equals(r.path("type").asText())), WAIT);
                assertThat(outcome.has("forward_error")).as("answered by the owner, not timed out: " + outcome).isFalse();
                assertThat(outcome.has("ownership")).as("not a failed forward: " + outcome).isFalse();
                if (held.contains(task)) {
                    assertThat(outcome.path("type").asText()).as(outcome.toString()).isEqualTo("claim_denied");
                    assertThat(outcome.path("owner_hub_id").asText()).isEqualTo("hub-a");
                    assertThat(outcome.path("payload").asText()).as(outcome.toString()).contains("lab/dave");
                } else {
                    assertThat(outcome.path("type").asText()).as(outcome.toString()).isEqualTo("claim_granted");
                    assertThat(outcome.path("owner").asText()).isEqualTo("lab/crowd-" + i);
                    epochs.put(task, outcome.path("epoch").asLong());
                }
            }
        }
        crowd.forEach(HubClient::close);
        assertThat(epochs).hasSize(3 * PER_NODE - held.size());
        assertThat(new HashSet<>(epochs.values())).as("every grant has an epoch of its own").hasSize(epochs.size());

        // hub-a journaled exactly one grant per task: dave's for the held ones, the crowd's for the others
        ObjectNode log = ownerPage();
        for (int i = 0; i < 3; i++) {
            for (int t = 0; t < PER_NODE; t++) {
                String task = task(i, t);
                assertThat(claimRecords(log, task)).as("hub-a's grants of " + task).hasSize(1);
            }
        }

        // one link, held by the leader: no node's forward met another node's connection on the owner's name
        double forwarded = 0;
        for (HubDaemon node : nodes) {
            String m = nodeMetrics(node);
            forwarded += FederationProcessTest.sample(m, "synapse_forwarded_claims_total");
            assertThat(FederationProcessTest.sum(m, "synapse_forwarded_claim_outcomes_total")
                    - FederationProcessTest.sum(m, "synapse_forwarded_claim_outcomes_total{owner=\"hub-a\",outcome=\"granted\"}")
                    - FederationProcessTest.sum(m, "synapse_forwarded_claim_outcomes_total{owner=\"hub-a\",outcome=\"denied\"}"))
                    .as("only granted and denied outcomes (no name_busy_retry, timeout, transport_failure): " + m)
                    .isZero();
        }
        assertThat(forwarded).as("each node counts its own agent's forwards").isEqualTo(3.0 * PER_NODE);
        awaitTheLink(nodes, termBefore, () -> {
            // the crowd's link closed with a lead lost since: the new leader opens its own
            String task = "relink-" + System.nanoTime();
            try (HubClient again = agent(nodes.get(0), "lab/relink")) { // a name of its own: crowd-0 may still be closing
                assertThat(keyedClaim(again, "lab/relink", task, task).path("type").asText()).isEqualTo("claim_granted");
            }
        }); // the leader's warm link, and nothing else
        try (HubClient second = HubClient.connect(ownerUri, WAIT, ClientTls.pinned(ownerServer.pin())
                .withClientCertificate(meshClientFiles.cert(), meshClientFiles.key()))) {
            ObjectNode hello = second.frame("hub-m", "heartbeat");
            second.send(hello);
            // the welcome comes first (the connection is open); binding the name is what is refused
            ObjectNode refused = second.await(r -> "name_conflict".equals(r.path("type").asText())
                    || "welcome".equals(r.path("type").asText()) && !r.path("online_agents").toString().contains("hub-m"),
                    WAIT);
            assertThat(refused.path("type").asText()).as("the cluster's link stays open between forwards: " + refused)
                    .isEqualTo("name_conflict");
        }
    }

    @Test
    void aKeyedRetryThroughAnotherNodeAfterTheLeaderIsKilledIsAnsweredFromTheOwnersLedger() throws Exception {
        startOwner();
        List<HubDaemon> nodes = startCluster();
        int leader = leaderIndex(nodes);
        HubDaemon first = nodes.get((leader + 1) % 3);
        HubDaemon second = nodes.get((leader + 2) % 3);

        // an agent of a follower claims with a key: the leader forwards it, hub-a grants it
        HubClient carol = agent(first, "lab/carol");
        double termBefore = term(nodes);
        ObjectNode granted = keyedClaim(carol, "lab/carol", "K-1", "k-9");
        assertThat(granted.path("type").asText()).as(granted.toString()).isEqualTo("claim_granted");
        long epoch = granted.path("epoch").asLong();
        awaitTheLink(nodes, termBefore, () -> assertThat(keyedClaim(carol, "lab/carol", "K-1", "k-9")
                .path("epoch").asLong()).as("a keyed retry").isEqualTo(epoch));
        carol.close();
        if (!leads(nodes.get(leader))) {
            leader = leaderIndex(nodes); // a lead lost on a loaded machine: kill the one that holds it now
            first = nodes.get((leader + 1) % 3);
            second = nodes.get((leader + 2) % 3);
        }

        // the leader dies; carol retries the same keyed claim through the other follower
        nodes.get(leader).close();
        HubClient again = agent(second, "lab/carol");
        ObjectNode replayed = keyedClaim(again, "lab/carol", "K-1", "k-9");
        assertThat(replayed.path("type").asText()).as(replayed.toString()).isEqualTo("claim_granted");
        assertThat(replayed.path("epoch").asLong()).as("the owner's ledger answers: the first grant").isEqualTo(epoch);
        // and a new claim goes through the new leader's link, opened on its first forward
        List<HubDaemon> alive = List.of(first, second);
        double termAfter = term(alive);
        ObjectNode fresh = keyedClaim(again, "lab/carol", "K-2", "k-10");
        assertThat(fresh.path("type").asText()).as(fresh.toString()).isEqualTo("claim_granted");
        assertThat(fresh.path("epoch").asLong()).isGreaterThan(epoch);
        // the dead leader's connection is gone, the new leader's is open
        awaitTheLink(alive, termAfter, () -> assertThat(keyedClaim(again, "lab/carol", "K-2", "k-10")
                .path("epoch").asLong()).as("a keyed retry").isEqualTo(fresh.path("epoch").asLong()));
        again.close();

        ObjectNode log = ownerPage();
        assertThat(claimRecords(log, "K-1")).as("hub-a granted K-1 once: " + log).hasSize(1);
        assertThat(claimRecords(log, "K-2")).hasSize(1);
    }

    @Test
    void aLeaderThatHandsOverTheLeadClosesItsLinkAndTheNewLeaderOpensItsOwn() throws Exception {
        startOwner();
        List<HubDaemon> nodes = startCluster();
        int leader = leaderIndex(nodes);
        int next = (leader + 1) % 3;
        HubClient erin = agent(nodes.get(leader), "lab/erin");
        double termBefore = term(nodes);
        assertThat(keyedClaim(erin, "lab/erin", "T-1", "t-1").path("type").asText()).isEqualTo("claim_granted");
        awaitTheLink(nodes, termBefore, () -> assertThat(keyedClaim(erin, "lab/erin", "T-1", "t-1")
                .path("type").asText()).isEqualTo("claim_granted"));
        if (!leads(nodes.get(leader))) {
            leader = leaderIndex(nodes); // a lead lost on a loaded machine: hand over from the one that holds it now
            next = (leader + 1) % 3;
        }

        // the lead moves while the old leader's link is open; the old leader lets go of hub-a's name
        dev.synapsehub.mesh.MeshAdmin.Transfer moved = dev.synapsehub.mesh.MeshAdmin.transferLeader(
                nodes.get(0).mesh().node().config().peers(), "n" + (next + 1), WAIT);
        assertThat(moved.to()).isEqualTo("n" + (next + 1));
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!(FederationProcessTest.sample(nodeMetrics(nodes.get(next)), "synapse_mesh_leader") == 1.0
                && FederationProcessTest.sample(nodeMetrics(nodes.get(leader)), "synapse_mesh_leader") == 0.0)) {
            assertThat(System.nanoTime() < deadline).as("n" + (next + 1) + " leads within " + WAIT).isTrue();
            TimeUnit.MILLISECONDS.sleep(100); // a pause between looks, not a wait for an outcome
        }
        // the old leader's agent claims again: the new leader forwards it over a link of its own
        double termMoved = term(nodes);
        ObjectNode after = keyedClaim(erin, "lab/erin", "T-2", "t-2");
        assertThat(after.path("type").asText()).as(after.toString()).isEqualTo("claim_granted");
        awaitTheLink(nodes, termMoved, () -> assertThat(keyedClaim(erin, "lab/erin", "T-2", "t-2")
                .path("type").asText()).isEqualTo("claim_granted"));
        erin.close();
        for (HubDaemon node : nodes) {
            String m = nodeMetrics(node);
            assertThat(FederationProcessTest.sum(m, "synapse_forwarded_claim_outcomes_total{owner=\"hub-a\",outcome=\"timeout\"}")
                    + FederationProcessTest.sum(m, "synapse_forwarded_claim_outcomes_total{owner=\"hub-a\",outcome=\"transport_failure\"}"))
                    .as(m).isZero();
        }
        ObjectNode log = ownerPage();
        assertThat(claimRecords(log, "T-1")).hasSize(1);
        assertThat(claimRecords(log, "T-2")).hasSize(1);
    }

    private static String task(int node, int t) {
        return "C-" + node + "-" + t;
    }

    /** hub-a owns lab and trusts the cluster (hub-m) to forward claims in it, and hub-obs to read its log. */
    private void startOwner() throws Exception {
        Path a = Files.createDirectories(dir.resolve("a"));
        ownerServer = TestCertificates.selfSigned("hub-a");
        TestCertificates.PemPair ownerFiles = ownerServer.write(a, "server");
        TestCertificates.Authority ca = TestCertificates.authority("fed-client-ca");
        TestCertificates.Identity meshClient = ca.issue("hub-m");
        meshClientFiles = meshClient.write(dir, "mesh-client");
        TestCertificates.Identity observer = ca.issue("hub-obs");
        observerFiles = observer.write(dir, "observer");
        ca.writeCertificate(a, "client-ca");
        TestCertificates.writePrivate(a.resolve("federation.json"), "{\"version\":1,\"records\":["
                + record("m.example", meshClient, "hub-m:2026") + "," + record("o.example", observer, "hub-obs:2026") + "]}");
        TestCertificates.writePrivate(a.resolve("serving-policy.json"), "{\"version\":1,"
                + "\"federation_store\":\"federation.json\",\"client_ca_file\":\"client-ca.pem\",\"grants\":["
                + "{\"sender\":\"hub-m\",\"domain_id\":\"m.example\",\"namespace\":\"lab\",\"signing_key_id\":\"hub-m:2026\"},"
                + "{\"sender\":\"hub-obs\",\"domain_id\":\"o.example\",\"namespace\":\"lab\",\"signing_key_id\":\"hub-obs:2026\"}]}");
        LoopbackHub owner = new LoopbackHub();
        hubs.add(owner);
        HubDaemon daemon = owner.start("--port", "0", "--db", a.resolve("a.db").toString(), "--hub-id", "hub-a",
                "--metrics", "--namespace-owner", "lab=hub-a", "--namespace-owner", "proj=hub-m",
                "--tls-certfile", ownerFiles.cert().toString(), "--tls-keyfile", ownerFiles.key().toString(),
                "--multihub-serving-policy", a.resolve("serving-policy.json").toString());
        ownerPort = daemon.port();
        ownerUri = URI.create("wss://127.0.0.1:" + ownerPort);
    }

    private static String record(String domain, TestCertificates.Identity who, String key) {
        return "{\"domain_id\":\"" + domain + "\",\"namespaces\":[\"lab\"],\"certificate_pins\":[\"" + who.pin().text()
                + "\"],\"signing_key_ids\":[\"" + key + "\"],\"scope_grants\":[],\"expires_at\":null,\"revoked\":false,"
                + "\"provenance\":{\"source\":\"ticket-9\",\"imported_at\":1.0,\"confirmed_by\":\"bob\"}}";
    }

    /** Three nodes of hub-m routing lab to hub-a from every node. */
    private List<HubDaemon> startCluster() throws Exception {
        return MeshNodes.start(hubs, dir, List.of("--hub-id", "hub-m",
                "--namespace-owner", "proj=hub-m", "--namespace-owner", "lab=hub-a",
                "--metrics", "--claim-peer", "hub-a=" + ownerUri, "--claim-peer-pin", "hub-a=" + ownerServer.pin().text(),
                "--multihub-client-certfile", meshClientFiles.cert().toString(),
                "--multihub-client-keyfile", meshClientFiles.key().toString()));
    }

    private static int leaderIndex(List<HubDaemon> nodes) throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() < deadline) {
            for (int i = 0; i < nodes.size(); i++) {
                if (FederationProcessTest.sample(nodeMetrics(nodes.get(i)), "synapse_mesh_leader") == 1.0) {
                    return i;
                }
            }
            TimeUnit.MILLISECONDS.sleep(100); // a pause between looks, not a wait for an outcome
        }
        throw new AssertionError("no node reports itself the leader within " + WAIT);
    }

    /** hub-a's log from the start, read as hub-obs (the cluster's name is bound to the leader's link). */
    private ObjectNode ownerPage() throws Exception {
        try (HubClient peer = HubClient.connect(ownerUri, WAIT, ClientTls.pinned(ownerServer.pin())
                .withClientCertificate(observerFiles.cert(), observerFiles.key()))) {
            peer.register("hub-obs", null, WAIT);
            ObjectNode request = peer.frame("hub-obs", "multihub_log_request");
            request.put("after_seq", 0);
            request.put("limit", 1000);
            peer.send(request);
            return peer.awaitType("multihub_log_snapshot", WAIT);
        }
    }

    private static List<JsonNode> claimRecords(ObjectNode page, String task) {
        List<JsonNode> out = new ArrayList<>();
        for (JsonNode e : page.path("events")) {
            if ("claim".equals(e.path("kind").asText()) && task.equals(e.path("payload").path("task_id").asText())) {
                out.add(e);
            }
        }
        return out;
    }

    /** A step that makes the cluster forward once more. */
    private interface Forward {
        void run() throws Exception;
    }

    /** The highest Raft term the nodes report. */
    private static double term(List<HubDaemon> nodes) throws Exception {
        double t = 0;
        for (HubDaemon node : nodes) {
            t = Math.max(t, FederationProcessTest.sample(nodeMetrics(node), "synapse_mesh_term"));
        }
        return t;
    }

    /**
     * Waits until hub-a counts exactly one connection: the cluster's link, opened by the forwards
     * made since the nodes' term was {@code termBefore}. A leader that loses the lead closes its
     * link and the next one opens its own only when it forwards, so if the term moves (an
     * election after a long pause on a loaded machine) the check is made again after one more
     * forward, up to three times; with no election, hub-a must count exactly one.
     */
    private void awaitTheLink(List<HubDaemon> nodes, double termBefore, Forward again) throws Exception {
        double since = termBefore;
        for (int elections = 0; ; elections++) {
            long deadline = System.nanoTime() + WAIT.toNanos();
            double last = -1;
            while (System.nanoTime() < deadline) {
                last = FederationProcessTest.sample(ownerMetrics(), "synapse_connected_clients");
                if (last == 1) {
                    return;
                }
                if (term(nodes) > since) {
                    break;
                }
                TimeUnit.MILLISECONDS.sleep(100); // a pause between looks, not a wait for an outcome
            }
            double now = term(nodes);
            if (now == since || elections == 2) {
                throw new AssertionError("hub-a has " + last + " connections, not 1 (term " + termBefore + " -> " + now + ")");
            }
            since = now;
            again.run();
        }
    }

    private static boolean leads(HubDaemon node) throws Exception {
        return FederationProcessTest.sample(nodeMetrics(node), "synapse_mesh_leader") == 1.0;
    }

    private String ownerMetrics() throws Exception {
        SSLContext ssl = SSLContext.getInstance("TLS");
        ssl.init(null, new TrustManager[] {TestCertificates.trustAll()}, null);
        HttpResponse<String> r = HttpClient.newBuilder().sslContext(ssl).build().send(HttpRequest.newBuilder(
                URI.create("https://127.0.0.1:" + ownerPort + "/metrics")).timeout(WAIT).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(200);
        return r.body();
    }

    private static String nodeMetrics(HubDaemon node) throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + node.port() + "/metrics")).timeout(WAIT).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(200);
        return r.body();
    }

    private static HubClient agent(HubDaemon node, String name) throws Exception {
        HubClient c = HubClient.connect(URI.create("ws://127.0.0.1:" + node.port()), WAIT);
        c.register(name, null, WAIT);
        return c;
    }

    private static ObjectNode keyedClaim(HubClient agent, String name, String task, String idemKey) throws Exception {
        ObjectNode f = agent.frame(name, "claim");
        f.put("task_id", task);
        f.put("idem_key", idemKey);
        f.putArray("paths").add("src/" + task);
        agent.send(f);
        return agent.await(r -> task.equals(r.path("task_id").asText())
                && ("claim_granted".equals(r.path("type").asText()) && name.equals(r.path("owner").asText())
                || "claim_denied".equals(r.path("type").asText())), WAIT);
    }
}
