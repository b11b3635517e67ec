package dev.synapsehub.federation.gate;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.client.tls.ClientTls;
import dev.synapsehub.client.tls.TestCertificates;
import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.federation.testing.Pki;
import dev.synapsehub.federation.trust.FederationStore;
import dev.synapsehub.federation.trust.PeeringRecord;
import dev.synapsehub.federation.trust.Provenance;
import dev.synapsehub.federation.trust.ScopeGrant;
import dev.synapsehub.journal.DurableCoordination;
import dev.synapsehub.net.HubConfig;
import dev.synapsehub.net.HubServer;
import dev.synapsehub.net.extension.HubExtensions;
import dev.synapsehub.net.tls.TlsFiles;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The federation frame gate (contract A13 F1, F8, F9.5) over real loopback TLS with client
 * certificates made in the test: the signature's key id and the live certificate pin must name
 * one peered domain, the peering must be live and grant the namespace and the verb, and even
 * then no signature can be verified (the store has no public keys). Every refusal is an
 * {@code error} with the F8 text, and the refused frame changes nothing.
 */
class FrameGateTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    @TempDir
    Path dir;

    private Pki pki;
    private Pki.HubCerts b;
    private TestCertificates.PemPair aClient;
    private TestCertificates.PemPair revokedClient;
    private TestCertificates.PemPair expiredClient;
    private TestCertificates.PemPair strangerClient;
    private DurableCoordination durable;
    private HubServer server;
    private final List<HubClient> clients = new ArrayList<>();

    private static PeeringRecord record(String domain, String pin, String key, List<ScopeGrant> grants, Double expires,
                                        boolean revoked) {
        return new PeeringRecord(domain, List.of("proj"), List.of(pin), List.of(key), grants, expires, revoked,
                new Provenance("test", 1.0, "alice"));
    }

    @BeforeEach
    void start() throws Exception {
        pki = new Pki(dir);
        b = pki.hub("hub-b");
        TestCertificates.Identity a = pki.clientCa().issue("hub-a");
        TestCertificates.Identity revoked = pki.clientCa().issue("hub-r");
        TestCertificates.Identity expired = pki.clientCa().issue("hub-e");
        aClient = a.write(Files.createDirectories(dir.resolve("a")), "client");
        revokedClient = revoked.write(Files.createDirectories(dir.resolve("r")), "client");
        expiredClient = expired.write(Files.createDirectories(dir.resolve("e")), "client");
        strangerClient = pki.clientCa().issue("stranger").write(Files.createDirectories(dir.resolve("s")), "client");
        Path store = dir.resolve("b-federation.json");
        new FederationStore(List.of(
                record("a.example", a.pin().text(), "proj:hub-a:2026", List.of(new ScopeGrant("claim", "proj"),
                        new ScopeGrant("resource", "proj")), null, false),
                record("r.example", revoked.pin().text(), "k-revoked", List.of(new ScopeGrant("claim", "proj")), null, true),
                record("e.example", expired.pin().text(), "k-expired", List.of(new ScopeGrant("claim", "proj")), 1000.0,
                        false))).write(store);
        FrameGate gate = FrameGate.load(store, true, System.currentTimeMillis() / 1000.0, w -> { });
        durable = DurableCoordination.open(dir.resolve("b.db"), Clock.system(), CoordinationState::new, ActorSettings.DEFAULTS);
        // the client CA, as --multihub-serving-policy's client_ca_file sets it on the hub port
        TlsFiles tls = new TlsFiles(b.serverFiles().cert(), b.serverFiles().key(), null).withClientCa(pki.clientCaFile());
        server = new HubServer(HubConfig.builder().host("127.0.0.1").port(0).hubId("hub-b").tls(tls).metricsEnabled(true)
                .build(), durable.actor(), Clock.system(), durable.journal(), new HubExtensions(List.of(gate)));
        server.start();
    }

    @AfterEach
    void stop() throws Exception {
        clients.forEach(HubClient::close);
        server.close();
        durable.actor().close();
    }

    private HubClient agent(String name, TestCertificates.PemPair clientCert) throws Exception {
        ClientTls tls = ClientTls.pinned(b.server().pin());
        if (clientCert != null) {
            tls = tls.withClientCertificate(clientCert.cert(), clientCert.key());
        }
        HubClient c = HubClient.connect(URI.create("wss://127.0.0.1:" + server.boundPort() + "/"), WAIT, tls);
        clients.add(c);
        c.register(name, null, WAIT);
        return c;
    }

    /** Sends a {@code type} frame for {@code task}, signed with {@code keyId} (null: no signature), and returns the answer. */
    private static ObjectNode send(HubClient c, String name, String type, String task, String keyId) throws Exception {
        ObjectNode f = c.frame(name, type);
        f.put("task_id", task);
        f.putArray("paths").add("src/" + task); // disjoint scopes: claims by different agents never conflict
        if ("task_update".equals(type)) {
            f.put("status", "in_progress");
        }
        if (keyId != null) {
            ObjectNode s = f.putObject("signature");
            s.put("version", 2);
            s.put("key_id", keyId);
            s.put("algorithm", "ed25519");
            s.put("domain", "aef:legacy-event:v0.1");
            s.put("nonce", "n-" + task);
            s.put("sequence", 1);
            s.put("signed_at", System.currentTimeMillis() / 1000.0);
            s.put("value", java.util.Base64.getEncoder().encodeToString(new byte[64]));
        }
        c.send(f);
        return c.await(r -> "error".equals(r.path("type").asText()) || task.equals(r.path("task_id").asText())
                && r.path("type").asText().startsWith("claim_"), WAIT);
    }

    private static void assertRefused(ObjectNode reply, String reason, String domain) {
        assertThat(reply.path("type").asText()).as(reply.toString()).isEqualTo("error");
        assertThat(reply.path("payload").asText()).isEqualTo("federation denied: " + reason);
        assertThat(reply.path("federation_reason").asText()).isEqualTo(reason);
        if (domain == null) {
            assertThat(reply.has("federation_domain")).as(reply.toString()).isFalse();
        } else {
            assertThat(reply.path("federation_domain").asText()).isEqualTo(domain);
        }
    }

    @Test
    void everyCrossDomainFrameIsRefusedWithItsExactReasonAndChangesNothing() throws Exception {
        HubClient noCert = agent("proj/plain", null);
        assertRefused(send(noCert, "proj/plain", "claim", "T-1", "proj:hub-a:2026"), "peer_certificate_unavailable", null);

        HubClient a = agent("proj/alice", aClient);
        // every check passes, but no public key can verify the signature (F9.5)
        assertRefused(send(a, "proj/alice", "claim", "T-2", "proj:hub-a:2026"), "signature_not_verified", "a.example");
        assertRefused(send(a, "proj/alice", "resource_offer", "T-2r", "proj:hub-a:2026"), "signature_not_verified",
                "a.example"); // a "resource" grant covers the aliases
        assertRefused(send(a, "proj/alice", "release", "T-3", "proj:hub-a:2026"), "out_of_scope", "a.example");
        assertRefused(send(a, "proj/alice", "task_update", "T-3", "proj:hub-a:2026"), "out_of_scope", "a.example");
        // the certificate is a.example's, the key r.example's: not one domain
        assertRefused(send(a, "proj/alice", "claim", "T-4", "k-revoked"), "peer_domain_unresolved", null);

        HubClient ops = agent("ops/alice", aClient);
        assertRefused(send(ops, "ops/alice", "claim", "T-5", "proj:hub-a:2026"), "namespace_not_granted", "a.example");
        HubClient bare = agent("alice", aClient);
        assertRefused(send(bare, "alice", "claim", "T-5b", "proj:hub-a:2026"), "namespace_not_granted", "a.example");

        HubClient r = agent("proj/rita", revokedClient);
        assertRefused(send(r, "proj/rita", "claim", "T-6", "k-revoked"), "revoked_peering", "r.example");
        HubClient e = agent("proj/eve", expiredClient);
        assertRefused(send(e, "proj/eve", "claim", "T-7", "k-expired"), "expired_peering", "e.example");
        HubClient s = agent("proj/sam", strangerClient);
        assertRefused(send(s, "proj/sam", "claim", "T-8", "proj:hub-a:2026"), "peer_domain_unresolved", null);

        // nothing refused was granted: every task is still free for a local, unsigned claim
        HubClient local = agent("proj/local", null);
        for (String task : List.of("T-1", "T-2", "T-3", "T-4", "T-5", "T-5b", "T-6", "T-7", "T-8")) {
            ObjectNode reply = send(local, "proj/local", "claim", task, null);
            assertThat(reply.path("type").asText()).as(task + ": " + reply).isEqualTo("claim_granted");
            assertThat(reply.path("owner").asText()).isEqualTo("proj/local");
        }
        String metrics = dev.synapsehub.federation.testing.Http.get(server.boundPort(), "/metrics");
        assertThat(metrics).contains("synapse_federation_frame_gate_refusals_total{reason=\"signature_not_verified\"} 2")
                .contains("synapse_federation_frame_gate_refusals_total{reason=\"peer_domain_unresolved\"} 2");
    }

    @Test
    void aKeyNoPeeringEnrolsAndAFrameWithoutASignatureObjectAreLeftToTheHub() throws Exception {
        HubClient a = agent("proj/alice", aClient);
        assertThat(send(a, "proj/alice", "claim", "L-1", "some-local-key").path("type").asText()).isEqualTo("claim_granted");
        assertThat(send(a, "proj/alice", "claim", "L-2", null).path("type").asText()).isEqualTo("claim_granted");
        ObjectNode f = a.frame("proj/alice", "claim");
        f.put("task_id", "L-3");
        f.putArray("paths").add("src/L-3");
        f.put("signature", "proj:hub-a:2026"); // not an object: no federation signature
        a.send(f);
        assertThat(a.await(r -> "L-3".equals(r.path("task_id").asText()), WAIT).path("type").asText())
                .isEqualTo("claim_granted");
        HubClient plain = agent("proj/plain", null);
        ObjectNode l4 = send(plain, "proj/plain", "claim", "L-4", "some-local-key");
        assertThat(l4.path("type").asText()).as(l4.toString()).isEqualTo("claim_granted");
    }

    @Test
    void startUpRefusesScopeWithoutMessageAuthAndWarnsWithoutScope() throws Exception {
        String pin = pki.clientCa().issue("x").pin().text();
        Path scoped = dir.resolve("scoped/federation.json");
        new FederationStore(List.of(record("a.example", pin, "k", List.of(new ScopeGrant("claim", "proj")), null, false)))
                .write(scoped);
        assertThatThrownBy(() -> FrameGate.load(scoped, false, 2000.0, w -> { }))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("--federation-store grants cross-domain scope but --require-message-auth is not set; ");

        // a revoked or expired peering's grants are not usable scope: only the warning
        Path dead = dir.resolve("dead/federation.json");
        new FederationStore(List.of(record("r.example", pin, "k", List.of(new ScopeGrant("claim", "proj")), null, true),
                record("e.example", "sha256:" + "1".repeat(64), "k2", List.of(new ScopeGrant("claim", "proj")), 1000.0,
                        false))).write(dead);
        List<String> warnings = new ArrayList<>();
        FrameGate.load(dead, false, 2000.0, warnings::add);
        assertThat(warnings).singleElement().asString()
                .startsWith("WARNING --federation-store without --require-message-auth authorises no cross-domain frame; ");
        warnings.clear();
        FrameGate.load(scoped, true, 2000.0, warnings::add);
        assertThat(warnings).isEmpty();

        Files.setPosixFilePermissions(scoped, PosixFilePermissions.fromString("rw-r--r--"));
        assertThatThrownBy(() -> FrameGate.load(scoped, true, 2000.0, w -> { }))
                .hasMessageContaining("--federation-store: ").hasMessageContaining("is accessible by other users (mode 644)");
        assertThatThrownBy(() -> FrameGate.load(dir.resolve("missing.json"), true, 2000.0, w -> { }))
                .hasMessageContaining("--federation-store: cannot securely open");
    }
}
