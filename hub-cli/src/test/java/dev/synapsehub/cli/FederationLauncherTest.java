package dev.synapsehub.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.client.tls.ClientTls;
import dev.synapsehub.client.tls.TestCertificates;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Three hubs started by the real {@code bin/synapse-hub} script on the shaded jar (tag
 * "launcher": hub-cli's integration-test phase, after {@code package}), with mutual TLS from
 * certificates made here. hub-a owns {@code lab} and forwards {@code proj} to its owner hub-b;
 * hub-c is misconfigured to own {@code proj} too. A claim forwarded from hub-a is granted by
 * hub-b; with hub-b killed a forwarded claim is refused (INV-CR-4); once hub-a observes hub-c
 * holding a live claim in {@code proj}, the namespace is partitioned on hub-a and refused even
 * after hub-b is back; when hub-c's claim is released the partition heals and hub-b grants again.
 */
@Tag("launcher")
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class FederationLauncherTest {
    static final Duration WAIT = FederationProcessTest.WAIT;
    /** Longer than the watch's backoff can grow while a peer is down or starting. */
    static final Duration OBSERVE = FederationProcessTest.OBSERVE;

    @TempDir
    Path dir;
    private final Closer open = new Closer();

    @AfterEach
    void stop() throws Exception {
        open.close();
    }

    /** One hub's files and certificates. */
    private record Hub(String id, Path dir, TestCertificates.Identity server, TestCertificates.Identity client, int port) {
        String url() {
            return "wss://127.0.0.1:" + port;
        }
    }

    @Test
    void aForwardedClaimFailsClosedWhileTheOwnerIsDownIsRefusedWhilePartitionedAndIsGrantedOnceHealed() throws Exception {
        TestCertificates.Authority ca = TestCertificates.authority("fed-client-ca");
        Set<Integer> taken = new LinkedHashSet<>();
        List<Hub> hubs = new ArrayList<>();
        for (String letter : List.of("a", "b", "c")) {
            Path d = Files.createDirectories(dir.resolve(letter));
            int port;
            do {
                port = HubProcess.freePort();
            } while (!taken.add(port));
            Hub h = new Hub("hub-" + letter, d, TestCertificates.selfSigned("hub-" + letter), ca.issue("hub-" + letter), port);
            h.server().write(d, "server");
            h.client().write(d, "client");
            ca.writeCertificate(d, "client-ca");
            hubs.add(h);
        }
        Hub a = hubs.get(0);
        Hub b = hubs.get(1);
        Hub c = hubs.get(2);
        // hub-b and hub-c serve hub-a (b: its forwarded claims and its log; c: its log)
        for (Hub served : List.of(b, c)) {
            servePeer(served, a);
        }
        HubProcess procA = keep(HubProcess.viaLauncher("hub-a", a.port(), dir.resolve("hub-a.log"), List.of(
                "--db", a.dir().resolve("hub.db").toString(), "--hub-id", "hub-a",
                "--tls-certfile", a.dir().resolve("server.pem").toString(),
                "--tls-keyfile", a.dir().resolve("server.key").toString(),
                "--multihub-client-certfile", a.dir().resolve("client.pem").toString(),
                "--multihub-client-keyfile", a.dir().resolve("client.key").toString(),
                "--namespace-owner", "lab=hub-a", "--namespace-owner", "proj=hub-b",
                "--claim-peer", "hub-b=" + b.url(), "--claim-peer-pin", "hub-b=" + b.server().pin().text(),
                "--multihub-watch", "hub-b=" + b.url(), "--multihub-watch-pin", "hub-b=" + b.server().pin().text(),
                "--multihub-watch", "hub-c=" + c.url(), "--multihub-watch-pin", "hub-c=" + c.server().pin().text(),
                "--multihub-watch-interval", "1")));
        HubProcess procB = keep(HubProcess.viaLauncher("hub-b", b.port(), dir.resolve("hub-b.log"),
                servingArgs(b, "proj=hub-b")));
        // the misconfiguration partition detection exists for: a second hub that thinks it owns proj
        HubProcess procC = keep(HubProcess.viaLauncher("hub-c", c.port(), dir.resolve("hub-c.log"),
                servingArgs(c, "proj=hub-c")));
        for (HubProcess p : List.of(procA, procB, procC)) {
            p.start();
        }
        for (HubProcess p : List.of(procA, procB, procC)) {
            p.awaitHealthy();
        }

        // forwarded over mutual TLS and granted by the owner only
        HubClient alice = keep(agent(a, "proj/alice"));
        ObjectNode granted = FederationProcessTest.claim(alice, "proj/alice", "T-1", "src/x");
        assertThat(granted.path("type").asText()).as(granted + "\n" + procA.logTail()).isEqualTo("claim_granted");
        assertThat(FederationProcessTest.sample(procB.metrics(), "synapse_active_claims")).isEqualTo(1);
        assertThat(FederationProcessTest.sample(procA.metrics(), "synapse_active_claims")).isZero();

        // the owner killed: refused, never granted here
        procB.kill();
        HubClient dave = keep(agent(a, "proj/dave"));
        ObjectNode whileDown = FederationProcessTest.claim(dave, "proj/dave", "T-2", "src/y");
        assertThat(whileDown.path("type").asText()).as(whileDown.toString()).isEqualTo("claim_denied");
        assertThat(whileDown.path("ownership").asText()).isEqualTo("remote");
        assertThat(whileDown.path("owner_hub_id").asText()).isEqualTo("hub-b");

        // hub-c grants in proj; hub-a, observing it, enters a partition and refuses every proj claim
        HubClient zed = keep(agent(c, "proj/zed"));
        ObjectNode rogue = FederationProcessTest.claim(zed, "proj/zed", "T-9", "src/z");
        assertThat(rogue.path("type").asText()).as(rogue.toString()).isEqualTo("claim_granted");
        ObjectNode partitioned = claimUntil(dave, "T-2", "partitioned");
        assertThat(partitioned.path("type").asText()).isEqualTo("claim_denied");
        assertThat(partitioned.path("owner_hub_id").asText()).isEqualTo("hub-b");
        assertThat(partitioned.path("namespace").asText()).isEqualTo("proj");

        // the owner back does not end the partition: hub-c still asserts its claim
        procB.start().awaitHealthy();
        ObjectNode stillContested = FederationProcessTest.claim(dave, "proj/dave", "T-2", "src/y");
        assertThat(stillContested.path("ownership").asText()).as(stillContested.toString()).isEqualTo("partitioned");
        assertThat(FederationProcessTest.sample(procB.metrics(), "synapse_active_claims")).isEqualTo(1);

        // hub-c lets go; hub-a's next observation heals proj and the owner grants the waiting claim
        ObjectNode release = zed.frame("proj/zed", "release");
        release.put("task_id", "T-9");
        release.put("epoch", rogue.path("epoch").asLong());
        zed.send(release);
        assertThat(zed.awaitType("release_granted", WAIT).path("task_id").asText()).isEqualTo("T-9");
        ObjectNode healed = claimUntil(dave, "T-2", "granted");
        assertThat(healed.path("owner").asText()).isEqualTo("proj/dave");
        assertThat(FederationProcessTest.sample(procB.metrics(), "synapse_active_claims")).isEqualTo(2);
        assertThat(FederationProcessTest.sample(procA.metrics(), "synapse_active_claims")).isZero();
    }

    private <T extends AutoCloseable> T keep(T c) {
        return open.keep(c);
    }

    /** {@code served}'s federation store and serving policy: {@code peer} by its client certificate, granted proj. */
    private static void servePeer(Hub served, Hub peer) throws Exception {
        TestCertificates.writePrivate(served.dir().resolve("federation.json"), "{\"version\":1,\"records\":[{"
                + "\"domain_id\":\"a.example\",\"namespaces\":[\"proj\",\"lab\"],\"certificate_pins\":[\""
                + peer.client().pin().text() + "\"],\"signing_key_ids\":[\"" + peer.id() + ":2026\"],\"scope_grants\":[],"
                + "\"expires_at\":null,\"revoked\":false,"
                + "\"provenance\":{\"source\":\"ticket-7\",\"imported_at\":1.0,\"confirmed_by\":\"bob\"}}]}");
        TestCertificates.writePrivate(served.dir().resolve("serving-policy.json"), "{\"version\":1,"
                + "\"federation_store\":\"federation.json\",\"client_ca_file\":\"client-ca.pem\",\"grants\":[{\"sender\":\""
                + peer.id() + "\",\"domain_id\":\"a.example\",\"namespace\":\"proj\",\"signing_key_id\":\"" + peer.id()
                + ":2026\"}]}");
    }

    private static List<String> servingArgs(Hub h, String owner) {
        return List.of("--db", h.dir().resolve("hub.db").toString(), "--hub-id", h.id(),
                "--tls-certfile", h.dir().resolve("server.pem").toString(),
                "--tls-keyfile", h.dir().resolve("server.key").toString(),
                "--multihub-serving-policy", h.dir().resolve("serving-policy.json").toString(),
                "--namespace-owner", owner);
    }

    private static HubClient agent(Hub hub, String name) throws Exception {
        HubClient c = HubClient.connect(URI.create(hub.url()), WAIT, ClientTls.pinned(hub.server().pin()));
        c.register(name, null, WAIT);
        return c;
    }

    /**
     * Repeats dave's claim of {@code task} until its outcome is {@code wanted} ("granted", or the
     * ownership of a refusal); every other reply must be a refusal, never a grant.
     */
    private static ObjectNode claimUntil(HubClient dave, String task, String wanted) throws Exception {
        long deadline = System.nanoTime() + OBSERVE.toNanos();
        ObjectNode last = null;
        while (System.nanoTime() < deadline) {
            last = FederationProcessTest.claim(dave, "proj/dave", task, "src/y");
            boolean grant = "claim_granted".equals(last.path("type").asText());
            if (grant ? wanted.equals("granted") : wanted.equals(last.path("ownership").asText())) {
                return last;
            }
            assertThat(grant).as("granted while waiting for " + wanted + ": " + last).isFalse();
            TimeUnit.MILLISECONDS.sleep(200); // a pause between retries, not a wait for an outcome
        }
        throw new AssertionError("no " + wanted + " outcome within " + OBSERVE + "; last reply " + last);
    }
}
