package dev.synapsehub.federation.gate;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.client.tls.ClientTls;
import dev.synapsehub.client.tls.TestCertificates;
import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.federation.testing.Http;
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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The federation frame gate's store reloads without a restart (issue 12): an edit that validates
 * takes effect on the next signed frame; one that does not is never loaded, is logged and counted,
 * and every signed frame is refused ({@code federation_store_invalid}) until the file validates
 * again, the last valid store being kept; and {@code --federation-observe-only} refuses nothing
 * but counts what it would have refused. Real hub, loopback TLS, certificates made here.
 */
class FrameGateReloadTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final String KEY = "proj:hub-a:2026";

    @TempDir
    Path dir;
    private Pki.HubCerts b;
    private TestCertificates.Identity a;
    private TestCertificates.PemPair aClient;
    private Path store;
    private FrameGate gate;
    private DurableCoordination durable;
    private HubServer server;
    private final List<HubClient> clients = new ArrayList<>();

    private PeeringRecord peering(boolean revoked) {
        return new PeeringRecord("a.example", List.of("proj"), List.of(a.pin().text()), List.of(KEY),
                List.of(new ScopeGrant("claim", "proj")), null, revoked, new Provenance("test", 1.0, "alice"));
    }

    private void start(boolean observeOnly) throws Exception {
        Pki pki = new Pki(dir);
        b = pki.hub("hub-b");
        a = pki.clientCa().issue("hub-a");
        aClient = a.write(Files.createDirectories(dir.resolve("a")), "client");
        store = dir.resolve("b-federation.json");
        new FederationStore(List.of(peering(false))).write(store);
        gate = FrameGate.load(store, true, observeOnly, System.currentTimeMillis() / 1000.0, w -> { });
        durable = DurableCoordination.open(dir.resolve("b.db"), Clock.system(), CoordinationState::new, ActorSettings.DEFAULTS);
        TlsFiles tls = new TlsFiles(b.serverFiles().cert(), b.serverFiles().key(), null).withClientCa(pki.clientCaFile());
        server = new HubServer(HubConfig.builder().host("127.0.0.1").port(0).hubId("hub-b").tls(tls).metricsEnabled(true)
                .build(), durable.actor(), Clock.system(), durable.journal(), new HubExtensions(List.of(gate)));
        server.start();
    }

    @AfterEach
    void stop() throws Exception {
        clients.forEach(HubClient::close);
        if (server != null) {
            server.close();
            durable.actor().close();
        }
    }

    private HubClient agent(String name) throws Exception {
        HubClient c = HubClient.connect(URI.create("wss://127.0.0.1:" + server.boundPort() + "/"), WAIT,
                ClientTls.pinned(b.server().pin()).withClientCertificate(aClient.cert(), aClient.key()));
        clients.add(c);
        c.register(name, null, WAIT);
        return c;
    }

    /** A claim of {@code task}, signed with {@code keyId} (null: unsigned); the answer. */
    private static ObjectNode claim(HubClient c, String task, String keyId) throws Exception {
        ObjectNode f = c.frame("proj/alice", "claim");
        f.put("task_id", task);
        f.putArray("paths").add("src/" + task);
        if (keyId != null) {
            f.putObject("signature").put("version", 2).put("key_id", keyId).put("algorithm", "ed25519");
        }
        c.send(f);
        return c.await(r -> "error".equals(r.path("type").asText()) || task.equals(r.path("task_id").asText())
                && r.path("type").asText().startsWith("claim_"), WAIT);
    }

    private static String reason(ObjectNode reply) {
        assertThat(reply.path("type").asText()).as(reply.toString()).isEqualTo("error");
        return reply.path("federation_reason").asText();
    }

    /** Replaces the store file as editors and `federation import` do: a new file renamed over the old one. */
    private void replace(String text, String mode) throws Exception {
        Path tmp = dir.resolve("store.tmp");
        Files.deleteIfExists(tmp);
        Files.writeString(tmp, text, StandardCharsets.UTF_8);
        Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString(mode));
        Files.move(tmp, store, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    private boolean live(String task) throws Exception {
        double now = System.currentTimeMillis() / 1000.0;
        return durable.actor().read(s -> s.claims().liveClaim(task, now)).get().isPresent();
    }

    @Test
    void aValidEditTakesEffectOnTheNextSignedFrameWithoutARestart() throws Exception {
        start(false);
        HubClient alice = agent("proj/alice");
        assertThat(reason(claim(alice, "T-1", KEY))).isEqualTo("signature_not_verified");

        new FederationStore(List.of(peering(true))).write(store); // `federation revoke`
        assertThat(reason(claim(alice, "T-2", KEY))).isEqualTo("revoked_peering");

        new FederationStore(List.of()).write(store); // the peering removed: its key is no longer a federation key
        ObjectNode local = claim(alice, "T-3", KEY);
        assertThat(local.path("type").asText()).as(local.toString()).isEqualTo("claim_granted");
        assertThat(live("T-1")).isFalse();
        assertThat(live("T-2")).isFalse();
        String metrics = Http.get(server.boundPort(), "/metrics");
        assertThat(metrics).contains("synapse_federation_store_reloads_total{outcome=\"loaded\"} 2")
                .contains("synapse_federation_store_reloads_total{outcome=\"refused\"} 0")
                .contains("synapse_federation_store_valid 1");
    }

    @Test
    void anInvalidEditIsNotLoadedAndSignedFramesFailClosedUntilTheFileValidatesAgain() throws Exception {
        start(false);
        HubClient alice = agent("proj/alice");
        String valid = Files.readString(store);

        replace("{\"version\": 1, \"records\": [", "rw-------"); // a half-written file
        assertThat(reason(claim(alice, "T-1", KEY))).isEqualTo("federation_store_invalid");
        assertThat(reason(claim(alice, "T-2", "a-key-no-peering-enrols")))
                .as("the edit may have enrolled any key: nothing signed is trusted as local meanwhile")
                .isEqualTo("federation_store_invalid");
        ObjectNode unsigned = claim(alice, "T-3", null);
        assertThat(unsigned.path("type").asText()).as("not a federation frame under any store").isEqualTo("claim_granted");
        assertThat(gate.reload()).isFalse();
        String metrics = Http.get(server.boundPort(), "/metrics");
        assertThat(metrics).contains("synapse_federation_store_valid 0")
                .contains("synapse_federation_store_reloads_total{outcome=\"refused\"} 1")
                .contains("synapse_federation_frame_gate_refusals_total{reason=\"federation_store_invalid\"} 2");

        replace(valid, "rw-r--r--"); // the right content, readable by others: still refused
        assertThat(reason(claim(alice, "T-4", KEY))).isEqualTo("federation_store_invalid");

        Files.setPosixFilePermissions(store, PosixFilePermissions.fromString("rw-------")); // fixed by a chmod alone
        assertThat(reason(claim(alice, "T-5", KEY))).isEqualTo("signature_not_verified");
        assertThat(gate.reload()).isTrue();
        assertThat(Http.get(server.boundPort(), "/metrics")).contains("synapse_federation_store_valid 1")
                .contains("synapse_federation_store_reloads_total{outcome=\"loaded\"} 1")
                .contains("synapse_federation_store_reloads_total{outcome=\"refused\"} 2");
        for (String task : List.of("T-1", "T-2", "T-4", "T-5")) {
            assertThat(live(task)).as(task + " was refused and holds nothing").isFalse();
        }
    }

    /** The hub refuses every signed frame while the store is invalid: /health says so, not only a gauge. */
    @Test
    void anInvalidStoreHoldsHealthDegradedUntilTheFileValidatesAgain() throws Exception {
        start(false);
        assertThat(Http.get(server.boundPort(), "/health")).contains("\"status\":\"ok\"");
        String valid = Files.readString(store);

        replace("{\"version\": 1, \"records\": [", "rw-------"); // a half-written file: no frame needed to tell
        assertThat(Http.get(server.boundPort(), "/health")).contains("\"status\":\"degraded\"")
                .contains("\"reasons\":[\"federation_store_invalid\"]");

        replace(valid, "rw-------");
        assertThat(Http.get(server.boundPort(), "/health")).contains("\"status\":\"ok\"")
                .doesNotContain("federation_store_invalid");
    }

    @Test
    void observeOnlyRefusesNothingButCountsWhatItWouldHaveRefused() throws Exception {
        start(true);
        HubClient alice = agent("proj/alice");
        ObjectNode passed = claim(alice, "T-1", KEY);
        assertThat(passed.path("type").asText()).as(passed.toString()).isEqualTo("claim_granted");
        assertThat(live("T-1")).isTrue();
        assertThat(gate.count("signature_not_verified")).isEqualTo(1);
        assertThat(Http.get(server.boundPort(), "/metrics"))
                .contains("synapse_federation_frame_gate_observed_total{reason=\"signature_not_verified\"} 1")
                .doesNotContain("synapse_federation_frame_gate_refusals_total");
    }
}
