package dev.synapsehub.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.client.tls.ClientTls;
import dev.synapsehub.client.tls.TestCertificates;
import dev.synapsehub.core.governance.NamespaceGovernance;
import dev.synapsehub.federation.MeshFederationExtension;
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
 * {@code --multihub-watch} on a mesh (issue 12/13): three nodes started from the command line
 * own {@code proj} and watch hub-b (a standalone hub) and hub-d (nothing listens there). The
 * leader alone polls; the partition hub-b's claim makes is recorded once for the cluster even
 * though hub-d never answers, and a claim through any node is refused {@code partitioned} at
 * once, decided on the leader's actor. The leader is stopped: the new one keeps the recorded
 * partition (claims through every node still refused) and heals only once it has itself read
 * hub-b's whole log after hub-b let go; then every node grants in proj again.
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class MeshWatchCliTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final Duration OBSERVE = Duration.ofSeconds(90);

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
    void theLeaderRecordsAPartitionEveryNodeRefusesAtOnceANewLeaderKeepsItAndHealsOnlyAfterItsOwnCompleteRead()
            throws Exception {
        TestCertificates.Identity server = TestCertificates.selfSigned("hub-m");
        TestCertificates.PemPair serverFiles = server.write(dir, "server");
        // hub-b owns nothing and grants anything; it serves its log to hub-m's client certificate
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
        LoopbackHub peer = new LoopbackHub();
        hubs.add(peer);
        HubDaemon peerDaemon = peer.start("--port", "0", "--db", b.resolve("b.db").toString(), "--hub-id", "hub-b",
                "--tls-certfile", peerFiles.cert().toString(), "--tls-keyfile", peerFiles.key().toString(),
                "--multihub-serving-policy", b.resolve("serving-policy.json").toString());
        URI peerUri = URI.create("wss://127.0.0.1:" + peerDaemon.port());
        URI deadUri = URI.create("wss://127.0.0.1:" + HubProcess.freePort()); // nothing listens: never answers

        List<HubDaemon> nodes = MeshNodes.start(hubs, dir, List.of("--hub-id", "hub-m",
                "--tls-certfile", serverFiles.cert().toString(), "--tls-keyfile", serverFiles.key().toString(),
                "--namespace-owner", "proj=hub-m", "--namespace-owner", "lab=hub-x",
                "--multihub-watch", "hub-d=" + deadUri, "--multihub-watch-pin", "hub-d=" + peerServer.pin().text(),
                "--multihub-watch", "hub-b=" + peerUri, "--multihub-watch-pin", "hub-b=" + peerServer.pin().text(),
                "--multihub-client-certfile", meshClientFiles.cert().toString(),
                "--multihub-client-keyfile", meshClientFiles.key().toString(), "--multihub-watch-interval", "1"));
        List<HubClient> agents = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            agents.add(agent(nodes.get(i), server, "proj/agent-" + i));
        }
        assertThat(claim(agents.get(1), "proj/agent-1", "P-0").path("type").asText())
                .as("nothing contests proj yet").isEqualTo("claim_granted");

        // hub-b grants a claim in proj, which the cluster owns: the leader records the partition
        HubClient zed = HubClient.connect(peerUri, WAIT, ClientTls.pinned(peerServer.pin()));
        zed.register("proj/zed", null, WAIT);
        assertThat(claim(zed, "proj/zed", "Z-1").path("type").asText()).isEqualTo("claim_granted");
        // and one in lab, which hub-x owns: partitioned too, though no claim of lab is decided by the cluster
        HubClient lab = HubClient.connect(peerUri, WAIT, ClientTls.pinned(peerServer.pin()));
        lab.register("lab/zed", null, WAIT);
        assertThat(claim(lab, "lab/zed", "Z-2").path("type").asText()).isEqualTo("claim_granted");
        HubDaemon leader = await("a leader", () -> leader(nodes) != null) ? leader(nodes) : null;
        await("the leader recorded the partitions though hub-d never answered",
                () -> governance(leader(nodes)).partitions().size() == 2);
        assertThat(governance(leader).partitions().get(1).namespace()).isEqualTo("proj");
        assertThat(governance(leader).partitions().get(1).contestingHubs()).containsExactly("hub-b");
        // a claim in another hub's partitioned namespace is refused partitioned at every node's edge, as a single
        // hub with the same flags answers it (not remote: it is not forwarded, nor refused for want of a route)
        for (int i = 0; i < 3; i++) {
            int node = i;
            await("node " + i + " applied lab's partition", () -> !governance(nodes.get(node)).partitions().isEmpty());
            HubClient labAgent = agent(nodes.get(i), server, "lab/agent-" + i);
            ObjectNode refused = claim(labAgent, "lab/agent-" + i, "L-" + i);
            assertThat(refused.path("type").asText()).as(refused.toString()).isEqualTo("claim_denied");
            assertThat(refused.path("ownership").asText()).as(refused.toString()).isEqualTo("partitioned");
            assertThat(refused.path("owner_hub_id").asText()).isEqualTo("hub-x");
            labAgent.close();
        }
        // at once through every node, the followers included (decided by the leader's actor)
        for (int i = 0; i < 3; i++) {
            ObjectNode refused = claim(agents.get(i), "proj/agent-" + i, "R-" + i);
            assertThat(refused.path("type").asText()).as(refused.toString()).isEqualTo("claim_denied");
            assertThat(refused.path("ownership").asText()).isEqualTo("partitioned");
            assertThat(refused.path("owner_hub_id").asText()).isEqualTo("hub-m");
            assertThat(refused.has("reason_code")).as("the ownership refusal of §11.3").isFalse();
        }

        // the leader stops; hub-b lets go at once, so a new leader that healed on anything but its own
        // complete read of hub-b's log would have to guess; it keeps the recorded partition meanwhile
        int gone = nodes.indexOf(leader);
        leader.close();
        List<HubDaemon> survivors = new ArrayList<>(nodes);
        survivors.remove(leader);
        await("a new leader", () -> leader(survivors) != null);
        HubDaemon next = leader(survivors);
        for (int i = 0; i < 3; i++) {
            if (i == gone) {
                continue;
            }
            ObjectNode refused = claim(agents.get(i), "proj/agent-" + i, "S-" + i);
            assertThat(refused.path("ownership").asText()).as("through node " + i + " after the leader change: "
                    + refused).isEqualTo("partitioned");
        }
        ObjectNode release = zed.frame("proj/zed", "release");
        release.put("task_id", "Z-1");
        zed.send(release);
        await("the new leader healed proj", () -> governance(next).partitions().size() == 1);
        assertThat(governance(next).partitions().get(0).namespace()).as("lab stays contested").isEqualTo("lab");
        assertThat(watch(next).fold().completeAt("hub-b")).as("after a complete read of hub-b by the new leader")
                .isPositive();
        for (int i = 0; i < 3; i++) {
            if (i == gone) {
                continue;
            }
            // a follower's edge refuses by the partitions it has applied: it grants once the heal reached it
            int node = i;
            await("node " + i + " applied the heal", () -> governance(nodes.get(node)).partitions().size() == 1);
            ObjectNode granted = claim(agents.get(i), "proj/agent-" + i, "Q-" + i);
            assertThat(granted.path("type").asText()).as(granted.toString()).isEqualTo("claim_granted");
        }
        zed.close();
        lab.close();
        for (HubClient a : agents) {
            a.close();
        }
    }

    private static HubDaemon leader(List<HubDaemon> nodes) {
        for (HubDaemon n : nodes) {
            if (n.mesh().node().decides()) {
                return n;
            }
        }
        return null;
    }

    private static ClusterWatch watch(HubDaemon node) {
        return ((MeshFederationExtension) node.mesh().server().extensions().handler("multihub_log_request"))
                .clusterWatch();
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

    private static HubClient agent(HubDaemon node, TestCertificates.Identity server, String name) throws Exception {
        HubClient c = HubClient.connect(URI.create("wss://127.0.0.1:" + node.port()), WAIT, ClientTls.pinned(server.pin()));
        c.register(name, null, WAIT);
        return c;
    }

    private static ObjectNode claim(HubClient agent, String name, String task) throws Exception {
        return FederationProcessTest.claim(agent, name, task, "src/" + task);
    }
}
