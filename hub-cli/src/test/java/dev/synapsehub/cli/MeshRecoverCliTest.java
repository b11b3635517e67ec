package dev.synapsehub.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.client.tls.ClientTls;
import dev.synapsehub.client.tls.TestCertificates;
import dev.synapsehub.core.governance.NamespaceGovernance;
import dev.synapsehub.federation.MeshFederationExtension;
import dev.synapsehub.federation.follow.PeerView;
import dev.synapsehub.federation.route.ClusterWatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Lifting a quarantine on a mesh (issue 12/13): three nodes own {@code proj} and watch hub-b (a
 * standalone hub) and hub-d (nothing listens there). hub-b grants a claim in proj (the leader
 * records the partition), then is restarted on another journal, so it serves different content
 * at a seq the leader already read: the leader quarantines it, and every node holds the
 * quarantine. {@code synapse-hub federation observed} and {@code recover} are pointed at
 * followers: the view is the leader's, the recovery is recorded through the cluster, every node
 * lifts the quarantine, and the leader follows hub-b again from seq 0 (its new log asserts
 * nothing in proj, so the partition heals and claims are granted again). A recovery of a watched
 * peer that is not quarantined, and of a peer not watched, get a single hub's answers.
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class MeshRecoverCliTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final Duration OBSERVE = Duration.ofSeconds(90);
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;
    private final List<LoopbackHub> hubs = new CopyOnWriteArrayList<>();

    @AfterEach
    void stop() throws Exception {
        for (LoopbackHub h : hubs) {
            h.close();
        }
    }

    @Test
    void aRecoveryThroughAFollowerLiftsTheQuarantineOnEveryNodeAndTheLeaderFollowsThePeerAgain() throws Exception {
        TestCertificates.Identity server = TestCertificates.selfSigned("hub-m");
        TestCertificates.PemPair serverFiles = server.write(dir, "server");
        Path b = Files.createDirectories(dir.resolve("b"));
        TestCertificates.Identity peerServer = TestCertificates.selfSigned("hub-b");
        TestCertificates.PemPair peerFiles = peerServer.write(b, "server");
        TestCertificates.Authority ca = TestCertificates.authority("mesh-client-ca");
        TestCertificates.Identity meshClient = ca.issue("hub-m");
        TestCertificates.PemPair meshClientFiles = meshClient.write(dir, "mesh-client");
        ca.writeCertificate(b, "client-ca");
        TestCertificates.writePrivate(b.resolve("federation.json"), "{\"version\":1,\"records\":[{"
                + "\"domain_id\":\"m.example\",\"namespaces\":[\"proj\"],\"certificate_pins\":[\""
                + meshClient.pin().text() + "\"],\"signing_key_ids\":[\"hub-m:2026\"],\"scope_grants\":[],"
                + "\"expires_at\":null,\"revoked\":false,"
                + "\"provenance\":{\"source\":\"ticket-9\",\"imported_at\":1.0,\"confirmed_by\":\"bob\"}}]}");
        TestCertificates.writePrivate(b.resolve("serving-policy.json"), "{\"version\":1,"
                + "\"federation_store\":\"federation.json\",\"client_ca_file\":\"client-ca.pem\",\"grants\":[{"
                + "\"sender\":\"hub-m\",\"domain_id\":\"m.example\",\"namespace\":\"proj\","
                + "\"signing_key_id\":\"hub-m:2026\"}]}");
        int bPort = HubProcess.freePort();
        LoopbackHub peer = new LoopbackHub();
        hubs.add(peer);
        startPeer(peer, b, peerFiles, bPort, "b1.db");
        URI peerUri = URI.create("wss://127.0.0.1:" + bPort);
        URI deadUri = URI.create("wss://127.0.0.1:" + HubProcess.freePort()); // nothing listens: never answers
        List<String> watchFlags = List.of("--hub-id", "hub-m",
                "--tls-certfile", serverFiles.cert().toString(), "--tls-keyfile", serverFiles.key().toString(),
                "--namespace-owner", "proj=hub-m",
                "--multihub-watch", "hub-d=" + deadUri, "--multihub-watch-pin", "hub-d=" + peerServer.pin().text(),
                "--multihub-watch", "hub-b=" + peerUri, "--multihub-watch-pin", "hub-b=" + peerServer.pin().text(),
                "--multihub-client-certfile", meshClientFiles.cert().toString(),
                "--multihub-client-keyfile", meshClientFiles.key().toString(), "--multihub-watch-interval", "1",
                "--metrics");
        List<HubDaemon> nodes = MeshNodes.start(hubs, dir, watchFlags);

        // hub-b grants a claim in proj, which the cluster owns: the leader records the partition
        HubClient zed = HubClient.connect(peerUri, WAIT, ClientTls.pinned(peerServer.pin()));
        zed.register("proj/zed", null, WAIT);
        assertThat(claim(zed, "proj/zed", "Z-1").path("type").asText()).isEqualTo("claim_granted");
        zed.close();
        await("the leader recorded the partition", () -> leader(nodes) != null
                && governance(leader(nodes)).partitions().size() == 1);
        HubDaemon leader = leader(nodes);
        long read = await("the leader read hub-b's log", () -> view(leader, "hub-b") != null
                && view(leader, "hub-b").cursor() > 0 && view(leader, "hub-b").lag() == 0)
                ? view(leader, "hub-b").cursor() : -1;

        // hub-b comes back on another journal: different content at the seqs the leader read
        peer.close();
        startPeer(peer, b, peerFiles, bPort, "b2.db");
        HubClient yan = HubClient.connect(peerUri, WAIT, ClientTls.pinned(peerServer.pin()));
        yan.register("other/yan", null, WAIT);
        for (int i = 0; i < read + 4; i++) {
            assertThat(claim(yan, "other/yan", "Y-" + i).path("type").asText()).isEqualTo("claim_granted");
        }
        yan.close();
        await("every node holds hub-b's quarantine", () -> nodes.stream()
                .allMatch(n -> governance(n).quarantines().containsKey("hub-b")));
        for (HubDaemon n : nodes) { // replicated: a follower tells it too, not only the leader that watches
            assertThat(health(n)).as("node on port " + n.port()).contains("\"status\":\"degraded\"")
                    .contains("\"multihub_peer_quarantined\"");
        }
        List<HubDaemon> followers = new ArrayList<>(nodes);
        followers.remove(leader);

        // the advisory view through a follower is the leader's: hub-b quarantined, hub-d not
        CliTest.Run observed = cli(followers.get(0), server, "federation", "observed");
        assertThat(observed.code()).as(observed.err() + observed.out()).isZero();
        JsonNode view = JSON.readTree(observed.out());
        assertThat(view.path("type").asText()).isEqualTo("multihub_observed");
        assertThat(view.path("advisory").asBoolean()).isTrue();
        assertThat(peerIn(view, "hub-b").path("quarantined").asBoolean()).as(view.toString()).isTrue();
        assertThat(peerIn(view, "hub-b").path("quarantine").asText()).startsWith("equivocation at seq ");
        assertThat(peerIn(view, "hub-d").path("quarantined").asBoolean()).isFalse();
        assertThat(peerIn(view, "hub-b").path("claims")).as("what hub-b asserted before, kept")
                .anyMatch(c -> "Z-1".equals(c.path("task_id").asText()));
        ObjectNode refused = claimThrough(followers.get(1), server, "proj/agent-1", "R-1");
        assertThat(refused.path("ownership").asText()).as("the partition stands while hub-b is quarantined: " + refused)
                .isEqualTo("partitioned");

        // the operator recovers hub-b through the other follower
        CliTest.Run recovered = cli(followers.get(1), server, "federation", "recover", "hub-b", "--reason",
                "hub-b restored from a backup");
        assertThat(recovered.code()).as(recovered.err() + recovered.out()).isZero();
        JsonNode result = JSON.readTree(recovered.out());
        assertThat(result.path("type").asText()).isEqualTo("multihub_recover_result");
        assertThat(result.path("peer").asText()).isEqualTo("hub-b");
        assertThat(result.path("recovered").asBoolean()).isTrue();
        assertThat(result.path("detail").asText()).isEqualTo("recovered peer 'hub-b'; log generation 1, following from "
                + "seq 0");
        await("every node lifted the quarantine", () -> nodes.stream()
                .allMatch(n -> governance(n).quarantines().isEmpty()));
        for (HubDaemon n : nodes) {
            assertThat(health(n)).as("node on port " + n.port()).doesNotContain("multihub_peer_quarantined");
        }
        await("the leader follows hub-b's new log and heals proj", () -> governance(leader).partitions().isEmpty());
        // the heal reaches the followers by replication: a follower refuses from its own applied
        // state, so claiming through one before it applied the heal races the log
        await("every node applied the heal", () -> nodes.stream().allMatch(n -> governance(n).partitions().isEmpty()));
        PeerView again = view(leader, "hub-b");
        assertThat(again.quarantined()).isFalse();
        assertThat(again.generation()).isEqualTo(1);
        assertThat(again.cursor()).as("hub-b's new log read from seq 0").isGreaterThan(read);
        for (HubDaemon n : nodes) {
            ObjectNode granted = claimThrough(n, server, "proj/agent-" + nodes.indexOf(n), "G-" + nodes.indexOf(n));
            assertThat(granted.path("type").asText()).as(granted.toString()).isEqualTo("claim_granted");
        }
        CliTest.Run after = cli(followers.get(0), server, "federation", "observed");
        JsonNode afterView = JSON.readTree(after.out());
        assertThat(peerIn(afterView, "hub-b").path("quarantined").asBoolean()).isFalse();
        assertThat(peerIn(afterView, "hub-b").path("log_generation").asLong()).isEqualTo(1);
        assertThat(peerIn(afterView, "hub-b").path("claims"))
                .noneMatch(c -> "Z-1".equals(c.path("task_id").asText()));

        // a watched peer that is not quarantined, and a peer not watched: a single hub's answers
        LoopbackHub single = new LoopbackHub();
        hubs.add(single);
        List<String> singleFlags = new ArrayList<>(List.of("--port", "0"));
        singleFlags.addAll(watchFlags);
        HubDaemon standalone = single.start(singleFlags.toArray(String[]::new));
        for (String who : List.of("hub-d", "hub-x")) {
            CliTest.Run mesh = cli(followers.get(0), server, "federation", "recover", who, "--reason", "drill");
            CliTest.Run alone = cli(standalone, server, "federation", "recover", who, "--reason", "drill");
            JsonNode m = JSON.readTree(mesh.out());
            JsonNode s = JSON.readTree(alone.out());
            assertThat(mesh.code()).as(who + ": " + mesh.out()).isEqualTo(alone.code());
            assertThat(m.path("type").asText()).isEqualTo("multihub_recover_result");
            for (String field : List.of("peer", "recovered", "detail", "payload")) {
                assertThat(m.path(field)).as(who + " " + field).isEqualTo(s.path(field));
            }
        }
    }

    /** The body of node {@code node}'s {@code /health} (its TLS certificate trusted as is: a test's). */
    private static String health(HubDaemon node) throws Exception {
        javax.net.ssl.SSLContext ssl = javax.net.ssl.SSLContext.getInstance("TLS");
        ssl.init(null, new javax.net.ssl.TrustManager[] {TestCertificates.trustAll()}, null);
        return java.net.http.HttpClient.newBuilder().sslContext(ssl).build().send(java.net.http.HttpRequest.newBuilder(
                URI.create("https://127.0.0.1:" + node.port() + "/health")).timeout(WAIT).GET().build(),
                java.net.http.HttpResponse.BodyHandlers.ofString()).body();
    }

    private static void startPeer(LoopbackHub peer, Path b, TestCertificates.PemPair peerFiles, int port, String db)
            throws Exception {
        peer.start("--port", Integer.toString(port), "--db", b.resolve(db).toString(), "--hub-id", "hub-b",
                "--tls-certfile", peerFiles.cert().toString(), "--tls-keyfile", peerFiles.key().toString(),
                "--multihub-serving-policy", b.resolve("serving-policy.json").toString());
    }

    private static CliTest.Run cli(HubDaemon node, TestCertificates.Identity server, String... command) {
        List<String> args = new ArrayList<>(List.of(command));
        args.addAll(List.of("--url", "wss://127.0.0.1:" + node.port(), "--pin", server.pin().text(), "--timeout", "60",
                "--json"));
        return CliTest.run(args.toArray(String[]::new));
    }

    private static JsonNode peerIn(JsonNode observed, String label) {
        for (JsonNode p : observed.path("peers")) {
            if (label.equals(p.path("peer").asText())) {
                return p;
            }
        }
        throw new AssertionError("no peer " + label + " in " + observed);
    }

    private static HubDaemon leader(List<HubDaemon> nodes) {
        for (HubDaemon n : nodes) {
            if (n.mesh().node().decides()) {
                return n;
            }
        }
        return null;
    }

    private static PeerView view(HubDaemon node, String peer) {
        ClusterWatch w = ((MeshFederationExtension) node.mesh().server().extensions()
                .handler("multihub_log_request")).clusterWatch();
        return w.fold().peer(peer);
    }

    private static NamespaceGovernance.Image governance(HubDaemon node) {
        try {
            return node.mesh().node().actor().read(s -> s.governance().image()).get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static boolean await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + OBSERVE.toNanos();
        while (System.nanoTime() < deadline) {
            if (condition.getAsBoolean()) {
                return true;
            }
            TimeUnit.MILLISECONDS.sleep(100); // a pause between looks, not a wait for an outcome
        }
        throw new AssertionError("not within " + OBSERVE + ": " + what);
    }

    private static ObjectNode claimThrough(HubDaemon node, TestCertificates.Identity server, String name, String task)
            throws Exception {
        try (HubClient c = HubClient.connect(URI.create("wss://127.0.0.1:" + node.port()), WAIT,
                ClientTls.pinned(server.pin()))) {
            c.register(name, null, WAIT);
            return claim(c, name, task);
        }
    }

    private static ObjectNode claim(HubClient agent, String name, String task) throws Exception {
        return FederationProcessTest.claim(agent, name, task, "src/" + task);
    }
}
