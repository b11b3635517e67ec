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

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Operator relays (contract A5.1) on a mesh: whichever node an authorised peer sends
 * {@code operator_relay_request} to, the leader decides it once (a keyed retry through another
 * node replays the first answer), its {@code release_granted} reaches agents on every node, the
 * two-person approvals are replicated (an approval taken by one node counts when the second
 * arrives at another), and a peer the serving policy does not authorise is refused on every node.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class MeshRelayCliTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final Duration OBSERVE = Duration.ofSeconds(60);

    @TempDir
    Path dir;
    private final List<LoopbackHub> hubs = new CopyOnWriteArrayList<>();
    private TestCertificates.Identity server;
    /** Client certificates of the peers: hub-a and hub-c are granted proj, hub-x is not. */
    private Map<String, TestCertificates.PemPair> peers;

    @AfterEach
    void stop() throws Exception {
        for (LoopbackHub h : hubs) {
            h.close();
        }
    }

    @Test
    void aRelayTakenByAFollowerIsDecidedOnceAndItsReleaseReachesAgentsOnEveryNode() throws Exception {
        List<HubDaemon> nodes = startMesh(List.of());
        int leader = leader(nodes);
        int follower = (leader + 1) % 3;
        int other = (leader + 2) % 3;
        HubClient alice = agent(nodes.get(leader), "proj/alice");
        assertThat(claim(alice, "proj/alice", "T-1").path("type").asText()).isEqualTo("claim_granted");
        List<HubClient> watchers = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            watchers.add(agent(nodes.get(i), "proj/watcher-" + i));
        }

        // hub-a asks a follower, keyed: the leader decides it, the follower answers as a single hub would
        ObjectNode first;
        try (HubClient a = peer(nodes.get(follower), "hub-a")) {
            first = relay(a, "hub-a", "T-1", "r-1");
        }
        assertThat(first.path("applied").asBoolean()).as(first.toString()).isTrue();
        assertThat(first.path("pending").asBoolean(true)).isFalse();
        assertThat(first.path("detail").asText()).isEqualTo("released by operator alice: stuck");
        assertThat(first.path("owner_hub_id").asText()).isEqualTo("hub-m");
        assertThat(first.path("namespace").asText()).isEqualTo("proj");
        for (int i = 0; i < 3; i++) { // published from the committed record on every node, not only where it arrived
            ObjectNode released = watchers.get(i).await(f -> "release_granted".equals(f.path("type").asText())
                    && "T-1".equals(f.path("task_id").asText()), WAIT);
            assertThat(released.path("payload").asText()).as("node n" + (i + 1)).contains("released by operator alice");
        }

        // alice takes T-1 again; the keyed retry through another node replays the first answer and releases nothing
        ObjectNode again = claim(alice, "proj/alice", "T-1");
        assertThat(again.path("type").asText()).as(again.toString()).isEqualTo("claim_granted");
        ObjectNode replayed;
        try (HubClient a = peer(nodes.get(other), "hub-a")) {
            replayed = relay(a, "hub-a", "T-1", "r-1");
        }
        assertThat(replayed).as("the first answer, verbatim").isEqualTo(first);
        HubClient bob = agent(nodes.get(other), "proj/bob");
        ObjectNode held = claim(bob, "proj/bob", "T-1");
        assertThat(held.path("type").asText()).as("alice still holds T-1: " + held).isEqualTo("claim_denied");
        for (HubDaemon node : nodes) {
            ObjectNode page = awaitPage(node, p -> records(p, "operator_relay").size() >= 1);
            List<JsonNode> audits = records(page, "operator_relay");
            assertThat(audits).as("one operator_relay record on every node: " + page).hasSize(1);
            assertThat(audits.get(0).path("payload").path("peer").asText()).isEqualTo("hub-a");
            assertThat(audits.get(0).path("payload").path("task_id").asText()).isEqualTo("T-1");
        }

        // a peer the serving policy does not authorise is refused on every node, as a single hub refuses it
        for (HubDaemon node : nodes) {
            try (HubClient x = peer(node, "hub-x")) {
                ObjectNode refused = relay(x, "hub-x", "T-1", null);
                assertThat(refused.path("applied").asBoolean(true)).as(refused.toString()).isFalse();
                assertThat(refused.path("pending").asBoolean(true)).isFalse();
                assertThat(refused.path("detail").asText()).isEqualTo("peer_not_authorised");
            }
        }
        assertThat(claim(bob, "proj/bob", "T-1").path("type").asText()).as("still held").isEqualTo("claim_denied");
        // each node counts the relays it answered: hub-x's refusal on each, hub-a's release where it arrived; the
        // keyed retry answered from the ledger is not counted again
        for (int i = 0; i < 3; i++) {
            String m = metrics(nodes.get(i));
            assertThat(served(m, "refused")).as("n" + (i + 1)).isEqualTo(1);
            assertThat(served(m, "applied")).as("n" + (i + 1)).isEqualTo(i == follower ? 1 : 0);
            assertThat(served(m, "pending")).isZero();
        }
        for (HubClient c : watchers) {
            c.close();
        }
        bob.close();
        alice.close();
    }

    @Test
    void aTwoPersonRelayApprovedOnTwoDifferentNodesAppliesOnce() throws Exception {
        List<HubDaemon> nodes = startMesh(List.of("--require-two-person-relay"));
        int leader = leader(nodes);
        int follower = (leader + 1) % 3;
        int other = (leader + 2) % 3;
        HubClient alice = agent(nodes.get(leader), "proj/alice");
        assertThat(claim(alice, "proj/alice", "T-2").path("type").asText()).isEqualTo("claim_granted");
        HubClient watcher = agent(nodes.get(leader), "proj/watcher");

        // hub-a's approval, taken by a follower: recorded, nothing released
        try (HubClient a = peer(nodes.get(follower), "hub-a")) {
            ObjectNode recorded = relay(a, "hub-a", "T-2", null);
            assertThat(recorded.path("applied").asBoolean(true)).as(recorded.toString()).isFalse();
            assertThat(recorded.path("pending").asBoolean()).isTrue();
            assertThat(recorded.path("detail").asText()).isEqualTo("recorded; awaiting approval by a second operator");
        }
        // every node lists the replicated approval
        for (HubDaemon node : nodes) {
            JsonNode listed = awaitPending(node, p -> p.size() == 1);
            assertThat(listed.toString()).isEqualTo(
                    "[{\"action\":\"release\",\"namespace\":\"proj\",\"task_id\":\"T-2\",\"requester\":\"hub-a\"}]");
        }
        // hub-a again, through another node: the same principal does not count twice
        try (HubClient a = peer(nodes.get(other), "hub-a")) {
            ObjectNode twice = relay(a, "hub-a", "T-2", null);
            assertThat(twice.path("applied").asBoolean(true)).as(twice.toString()).isFalse();
            assertThat(twice.path("pending").asBoolean()).isTrue();
            assertThat(twice.path("detail").asText())
                    .isEqualTo("already recorded by this verified principal; awaiting a distinct principal");
        }
        HubClient bob = agent(nodes.get(other), "proj/bob");
        assertThat(claim(bob, "proj/bob", "T-2").path("type").asText()).as("still held").isEqualTo("claim_denied");

        // hub-c approves through a third node: the release applies, once, and is published
        try (HubClient c = peer(nodes.get(other), "hub-c")) {
            ObjectNode applied = relay(c, "hub-c", "T-2", null);
            assertThat(applied.path("applied").asBoolean()).as(applied.toString()).isTrue();
            assertThat(applied.path("pending").asBoolean(true)).isFalse();
        }
        watcher.await(f -> "release_granted".equals(f.path("type").asText()) && "T-2".equals(f.path("task_id").asText()),
                WAIT);
        for (HubDaemon node : nodes) {
            assertThat(awaitPending(node, JsonNode::isEmpty).toString()).isEqualTo("[]");
            ObjectNode page = awaitPage(node, p -> records(p, "operator_relay").size() >= 1);
            assertThat(records(page, "operator_relay")).as("one release on every node: " + page).hasSize(1);
        }
        assertThat(claim(bob, "proj/bob", "T-2").path("type").asText()).as("released").isEqualTo("claim_granted");
        // counted where each request arrived: hub-a's approval on the follower, its second try and hub-c's release
        // on the other node, nothing on the leader
        for (int i = 0; i < 3; i++) {
            String m = metrics(nodes.get(i));
            assertThat(served(m, "pending")).as("n" + (i + 1)).isEqualTo(i == leader ? 0 : 1);
            assertThat(served(m, "applied")).as("n" + (i + 1)).isEqualTo(i == other ? 1 : 0);
            assertThat(served(m, "refused")).isZero();
        }
        for (HubClient h : List.of(alice, watcher, bob)) {
            h.close();
        }
    }

    /** The node's {@code /metrics} (served over its TLS port). */
    private static String metrics(HubDaemon node) throws Exception {
        javax.net.ssl.SSLContext ssl = javax.net.ssl.SSLContext.getInstance("TLS");
        ssl.init(null, new javax.net.ssl.TrustManager[] {TestCertificates.trustAll()}, null);
        java.net.http.HttpResponse<String> r = java.net.http.HttpClient.newBuilder().sslContext(ssl).build().send(
                java.net.http.HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + node.port() + "/metrics"))
                        .timeout(WAIT).GET().build(), java.net.http.HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(200);
        return r.body();
    }

    /** {@code synapse_operator_relays_served_total{outcome}} in {@code metrics}. */
    private static long served(String metrics, String outcome) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?m)^synapse_operator_relays_served_total"
                + "\\{outcome=\"" + outcome + "\"} (\\d+)$").matcher(metrics);
        assertThat(m.find()).as(outcome + " in\n" + metrics).isTrue();
        return Long.parseLong(m.group(1));
    }

    /** The index of the node that leads, once one does. */
    private static int leader(List<HubDaemon> nodes) throws InterruptedException {
        long deadline = System.nanoTime() + OBSERVE.toNanos();
        while (System.nanoTime() < deadline) {
            for (int i = 0; i < nodes.size(); i++) {
                if (nodes.get(i).meshStatus().leading()) {
                    return i;
                }
            }
            TimeUnit.MILLISECONDS.sleep(100); // a pause between looks, not a wait for an outcome
        }
        throw new AssertionError("no node leads within " + OBSERVE);
    }

    /** A release of {@code task} in proj by operator alice, keyed when {@code idemKey} is not null; its result. */
    private static ObjectNode relay(HubClient peer, String name, String task, String idemKey) throws Exception {
        ObjectNode f = peer.frame(name, "operator_relay_request");
        f.put("action", "release").put("namespace", "proj").put("task_id", task).put("operator", "alice")
                .put("origin_hub_id", name).put("reason", "stuck");
        if (idemKey != null) {
            f.put("idem_key", idemKey);
        }
        peer.send(f);
        return peer.await(r -> "operator_relay_result".equals(r.path("type").asText())
                && task.equals(r.path("task_id").asText()), WAIT);
    }

    private HubClient peer(HubDaemon node, String name) throws Exception {
        TestCertificates.PemPair files = peers.get(name);
        HubClient c = HubClient.connect(URI.create("wss://127.0.0.1:" + node.port()), WAIT,
                ClientTls.pinned(server.pin()).withClientCertificate(files.cert(), files.key()));
        c.register(name, null, WAIT);
        return c;
    }

    private HubClient agent(HubDaemon node, String name) throws Exception {
        HubClient c = HubClient.connect(URI.create("wss://127.0.0.1:" + node.port()), WAIT, ClientTls.pinned(server.pin()));
        c.register(name, null, WAIT);
        return c;
    }

    private static ObjectNode claim(HubClient agent, String name, String task) throws Exception {
        return FederationProcessTest.claim(agent, name, task, "src/" + task);
    }

    /** {@code state_snapshot.pending_relay_approvals} of {@code node}, asked for until it satisfies {@code condition}. */
    private JsonNode awaitPending(HubDaemon node, Predicate<JsonNode> condition) throws Exception {
        long deadline = System.nanoTime() + OBSERVE.toNanos();
        JsonNode last = null;
        String name = "proj/reader-" + System.nanoTime();
        try (HubClient reader = agent(node, name)) {
            while (System.nanoTime() < deadline) {
                reader.send(reader.frame(name, "state_request"));
                last = reader.awaitType("state_snapshot", WAIT).path("snapshot").path("pending_relay_approvals");
                if (condition.test(last)) {
                    return last;
                }
                TimeUnit.MILLISECONDS.sleep(200); // a pause between queries, not a wait for an outcome
            }
        }
        throw new AssertionError("no matching pending_relay_approvals within " + OBSERVE + "; last " + last);
    }

    /** {@code node}'s log from the start, asked as hub-a, until it satisfies {@code condition}. */
    private ObjectNode awaitPage(HubDaemon node, Predicate<ObjectNode> condition) throws Exception {
        long deadline = System.nanoTime() + OBSERVE.toNanos();
        ObjectNode last = null;
        while (System.nanoTime() < deadline) {
            try (HubClient peer = peer(node, "hub-a")) {
                ObjectNode request = peer.frame("hub-a", "multihub_log_request");
                request.put("after_seq", 0);
                request.put("limit", 1000);
                peer.send(request);
                last = peer.awaitType("multihub_log_snapshot", WAIT);
            }
            if (condition.test(last)) {
                return last;
            }
            TimeUnit.MILLISECONDS.sleep(200); // a pause between requests, not a wait for an outcome
        }
        throw new AssertionError("no matching log page within " + OBSERVE + "; last " + last);
    }

    private static List<JsonNode> records(ObjectNode page, String kind) {
        List<JsonNode> out = new ArrayList<>();
        for (JsonNode e : page.path("events")) {
            if (kind.equals(e.path("kind").asText())) {
                out.add(e);
            }
        }
        return out;
    }

    /**
     * The cluster's server certificate; client certificates for hub-a, hub-c and hub-x from one CA;
     * a serving policy granting hub-a and hub-c the namespace proj, and nothing to hub-x.
     */
    private void trust() throws Exception {
        server = TestCertificates.selfSigned("hub-m");
        TestCertificates.Authority ca = TestCertificates.authority("fed-client-ca");
        ca.writeCertificate(dir, "client-ca");
        peers = new java.util.HashMap<>();
        StringBuilder records = new StringBuilder();
        StringBuilder grants = new StringBuilder();
        for (String peer : List.of("hub-a", "hub-c", "hub-x")) {
            TestCertificates.Identity client = ca.issue(peer);
            peers.put(peer, client.write(dir, "client-" + peer));
            if ("hub-x".equals(peer)) {
                continue; // presents a certificate of the trusted CA, but no record or grant names it
            }
            records.append(records.length() == 0 ? "" : ",").append("{\"domain_id\":\"").append(peer)
                    .append(".example\",\"namespaces\":[\"proj\"],\"certificate_pins\":[\"").append(client.pin().text())
                    .append("\"],\"signing_key_ids\":[\"").append(peer).append(":2026\"],\"scope_grants\":[],")
                    .append("\"expires_at\":null,\"revoked\":false,\"provenance\":{\"source\":\"ticket-7\",")
                    .append("\"imported_at\":1.0,\"confirmed_by\":\"bob\"}}");
            grants.append(grants.length() == 0 ? "" : ",").append("{\"sender\":\"").append(peer)
                    .append("\",\"domain_id\":\"").append(peer).append(".example\",\"namespace\":\"proj\",")
                    .append("\"signing_key_id\":\"").append(peer).append(":2026\"}");
        }
        TestCertificates.writePrivate(dir.resolve("federation.json"),
                "{\"version\":1,\"records\":[" + records + "]}");
        TestCertificates.writePrivate(dir.resolve("serving-policy.json"), "{\"version\":1,"
                + "\"federation_store\":\"federation.json\",\"client_ca_file\":\"client-ca.pem\",\"grants\":["
                + grants + "]}");
    }

    /** Three nodes of hub-m owning proj, each with TLS and the serving policy, plus {@code extra} flags. */
    private List<HubDaemon> startMesh(List<String> extra) throws Exception {
        trust();
        TestCertificates.PemPair serverFiles = server.write(dir, "server");
        List<String> flags = new ArrayList<>(List.of("--metrics", "--hub-id", "hub-m", "--namespace-owner", "proj=hub-m",
                "--tls-certfile", serverFiles.cert().toString(), "--tls-keyfile", serverFiles.key().toString(),
                "--multihub-serving-policy", dir.resolve("serving-policy.json").toString()));
        flags.addAll(extra);
        return MeshNodes.start(hubs, dir, flags);
    }
}
