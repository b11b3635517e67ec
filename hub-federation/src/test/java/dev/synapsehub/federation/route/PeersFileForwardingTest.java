package dev.synapsehub.federation.route;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.client.tls.TestCertificates;
import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.federation.FederationSettings;
import dev.synapsehub.federation.follow.WatchSettings;
import dev.synapsehub.federation.testing.Await;
import dev.synapsehub.federation.testing.FedHub;
import dev.synapsehub.federation.trust.PeersFile;
import dev.synapsehub.federation.testing.Http;
import dev.synapsehub.federation.testing.Pki;
import dev.synapsehub.federation.testing.TrustFiles;
import dev.synapsehub.federation.trust.ServingTrust;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Claim routes from a peers file ({@code --federation-peers}) over real mutual TLS on loopback:
 * an edit that validates is used by the next forwarded claim, the warm link included (it
 * reconnects with the new pin); an edit that does not validate refuses every forwarded claim in
 * the transport-failure shape of §11.3 until it validates, and never forwards on the old route.
 */
class PeersFileForwardingTest {
    @TempDir
    Path dir;
    Pki pki;
    Pki.HubCerts aCerts;
    FedHub b;
    final List<AutoCloseable> open = new ArrayList<>();

    @BeforeEach
    void ownerB() throws Exception {
        pki = new Pki(dir);
        aCerts = pki.hub("hub-a");
        Path policy = TrustFiles.servingPolicy(dir.resolve("b-trust"), pki.clientCaFile(),
                List.of(TrustFiles.peering("a.example", "proj", "k", List.of(aCerts.client().pin().text()))),
                List.of(new TrustFiles.Grant("hub-a", "a.example", "proj", "k")));
        b = keep(new FedHub(pki.hub("hub-b"), dir.resolve("b.db"), new FederationSettings(
                ServingTrust.load(policy, m -> { }), WatchSettings.none(),
                new NamespaceOwners("hub-b", Map.of("proj", "hub-b")), ForwardSettings.none())));
    }

    @AfterEach
    void close() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    private <T extends AutoCloseable> T keep(T c) {
        open.add(c);
        return c;
    }

    @Test
    void aValidEditIsUsedByTheNextClaimAndAnInvalidOneRefusesEveryClaimUntilItValidates() throws Exception {
        Path peers = dir.resolve("a-peers.json");
        String good = claimRoute(b.certs.server().pin().text());
        replace(peers, good);
        ForwardSettings forward = new ForwardSettings(Map.of(), null, aCerts.clientFiles().cert(),
                aCerts.clientFiles().key(), ForwardSettings.BOUND);
        FedHub a = keep(new FedHub(aCerts, dir.resolve("a.db"), new FederationSettings(ServingTrust.none(),
                WatchSettings.none(), new NamespaceOwners("hub-a", Map.of("proj", "hub-b", "aproj", "hub-a")),
                forward, null, FederationSettings.RelayPolicy.DEFAULT, ForwardSettings.none(), peers)));
        HubClient a1 = a.agent("proj/a1");
        assertThat(FedHub.claim(a1, "proj/a1", "P-1").path("type").asText()).as("the file's route")
                .isEqualTo("claim_granted");

        // a valid edit: another pin for the same URI; the warm link must not go on with the old one
        edit(a, peers, claimRoute(TestCertificates.selfSigned("impostor").pin().text()), true);
        ObjectNode wrongPin = FedHub.claim(a1, "proj/a1", "P-2");
        assertThat(wrongPin.path("type").asText()).as(wrongPin.toString()).isEqualTo("claim_denied");
        assertThat(wrongPin.path("ownership").asText()).isEqualTo("remote");
        assertThat(live(b, "P-2")).as("nothing reached the owner under a pin no longer in force").isEmpty();
        edit(a, peers, good, true);
        assertThat(FedHub.claim(a1, "proj/a1", "P-2").path("type").asText()).as("the right pin again")
                .isEqualTo("claim_granted");

        // an edit that does not validate: refused in the transport-failure shape, never sent on the last good route
        edit(a, peers, good.replace("\"version\":1", "\"version\":1,\"colour\":\"red\""), false);
        ObjectNode refused = FedHub.claim(a1, "proj/a1", "P-3");
        assertThat(refused.path("type").asText()).as(refused.toString()).isEqualTo("claim_denied");
        assertThat(refused.path("ownership").asText()).isEqualTo("remote");
        assertThat(refused.path("owner_hub_id").asText()).isEqualTo("hub-b");
        assertThat(refused.has("forward_error")).isFalse();
        FedHub.claim(a1, "proj/a1", "P-4");
        assertThat(live(b, "P-3")).isEmpty();
        assertThat(live(b, "P-4")).isEmpty();
        assertThat(Http.get(a, "/health")).as("every peer operation is refused: not ok")
                .contains("\"status\":\"degraded\"").contains("\"federation_peers_invalid\"");
        String metrics = Http.get(a, "/metrics");
        assertThat(metrics).contains("synapse_federation_peers_file_refusals_total 2")
                .contains("synapse_federation_peers_file_invalid_total 1")
                .contains("synapse_forwarded_claim_outcomes_total{owner=\"hub-b\",outcome=\"transport_failure\"} 3");

        // valid again, with the right pin: forwarded from the next claim on
        edit(a, peers, good, true);
        assertThat(Http.get(a, "/health")).contains("\"status\":\"ok\"");
        assertThat(FedHub.claim(a1, "proj/a1", "P-3").path("type").asText()).isEqualTo("claim_granted");
        assertThat(live(b, "P-3")).isPresent();
    }

    /**
     * A claim route's token in a file of its own ({@code token_file}): replaced under the running
     * hub, the next forwarded claim after the watcher's check presents the new token (the warm link
     * reconnects); made invalid (world-readable), every forwarded claim is refused and counted,
     * never sent with the token the file held before, until the file is fixed.
     */
    @Test
    void aTokenFileReplacedUnderTheRunningHubIsUsedAndAnInvalidOneRefusesUntilFixed() throws Exception {
        Path policy = TrustFiles.servingPolicy(dir.resolve("t-trust"), pki.clientCaFile(),
                List.of(TrustFiles.peering("a.example", "proj", "k", List.of(aCerts.client().pin().text()))),
                List.of(new TrustFiles.Grant("hub-a", "a.example", "proj", "k")));
        FedHub owner = keep(new FedHub(pki.hub("hub-t"), dir.resolve("t.db"), new FederationSettings(
                ServingTrust.load(policy, m -> { }), WatchSettings.none(),
                new NamespaceOwners("hub-t", Map.of("proj", "hub-t")), ForwardSettings.none()),
                c -> c.token("right-token")));
        Path token = dir.resolve("secrets/t.token");
        Files.createDirectories(token.getParent());
        replace(token, "right-token\n");
        Path peers = dir.resolve("a-peers.json");
        replace(peers, "{\"version\":1,\"claim\":[{\"hub_id\":\"hub-t\",\"uri\":\"" + owner.uri() + "\",\"pin\":\""
                + owner.certs.server().pin().text() + "\",\"token_file\":\"secrets/t.token\"}]}");
        ForwardSettings forward = new ForwardSettings(Map.of(), null, aCerts.clientFiles().cert(),
                aCerts.clientFiles().key(), ForwardSettings.BOUND);
        FedHub a = keep(new FedHub(aCerts, dir.resolve("a.db"), new FederationSettings(ServingTrust.none(),
                WatchSettings.none(), new NamespaceOwners("hub-a", Map.of("proj", "hub-t")),
                forward, null, FederationSettings.RelayPolicy.DEFAULT, ForwardSettings.none(), peers)));
        HubClient a1 = a.agent("proj/a1");
        assertThat(FedHub.claim(a1, "proj/a1", "T-1").path("type").asText()).as("the token file's token")
                .isEqualTo("claim_granted");

        // another token in the file, the peers file untouched: the warm link reconnects with it and is refused
        editToken(a, token, "wrong-token\n", true);
        ObjectNode wrong = FedHub.claim(a1, "proj/a1", "T-2");
        assertThat(wrong.path("type").asText()).as(wrong.toString()).isEqualTo("claim_denied");
        assertThat(wrong.path("ownership").asText()).isEqualTo("remote");
        assertThat(live(owner, "T-2")).as("the owner refused the wrong token").isEmpty();
        editToken(a, token, "right-token\n", true);
        assertThat(FedHub.claim(a1, "proj/a1", "T-2").path("type").asText()).as("the right token again, no restart")
                .isEqualTo("claim_granted");

        // made world-readable: refused in the transport-failure shape, never sent with the token cached before
        PeersFile source = (PeersFile) a.federation.routes();
        long invalid = source.invalidEdits();
        Files.setPosixFilePermissions(token, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
        Await.until("the peers file's check finds the token file invalid", Duration.ofSeconds(20),
                () -> source.invalidEdits() > invalid);
        ObjectNode refused = FedHub.claim(a1, "proj/a1", "T-3");
        assertThat(refused.path("type").asText()).as(refused.toString()).isEqualTo("claim_denied");
        assertThat(refused.path("ownership").asText()).isEqualTo("remote");
        assertThat(live(owner, "T-3")).isEmpty();
        assertThat(Http.get(a, "/metrics")).contains("synapse_federation_peers_file_refusals_total 1")
                .contains("synapse_federation_peers_file_invalid_total 1");

        long loaded = source.loadedEdits();
        Files.setPosixFilePermissions(token, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        Await.until("the peers file's check finds the token file fixed", Duration.ofSeconds(20),
                () -> source.loadedEdits() > loaded);
        assertThat(FedHub.claim(a1, "proj/a1", "T-3").path("type").asText()).isEqualTo("claim_granted");
        assertThat(live(owner, "T-3")).isPresent();
    }

    /** Replaces the token file and waits for the hub's check of the peers file (and its token files) to find it. */
    private static void editToken(FedHub hub, Path token, String text, boolean valid) throws Exception {
        PeersFile source = (PeersFile) hub.federation.routes();
        long loaded = source.loadedEdits();
        long invalid = source.invalidEdits();
        replace(token, text);
        Await.until("the peers file's check finds the token file's edit", Duration.ofSeconds(20),
                () -> valid ? source.loadedEdits() > loaded : source.invalidEdits() > invalid);
    }

    @Test
    void theHubClosesThePeersFileWatcher() throws Exception {
        Path peers = dir.resolve("a-peers.json");
        replace(peers, claimRoute(b.certs.server().pin().text()));
        FedHub a = new FedHub(aCerts, dir.resolve("a.db"), new FederationSettings(ServingTrust.none(),
                WatchSettings.none(), new NamespaceOwners("hub-a", Map.of("proj", "hub-b")), ForwardSettings.none(),
                null, FederationSettings.RelayPolicy.DEFAULT, ForwardSettings.none(), peers));
        PeersFile source = (PeersFile) a.federation.routes();
        assertThat(source.watching()).isTrue();
        a.close();
        assertThat(source.watching()).as("closed with the hub").isFalse();
    }

    /** A start that fails after the watchers started (here: the port is taken) leaves none of them running. */
    @Test
    void aFailedStartLeavesNoWatcherThread() throws Exception {
        Path peers = dir.resolve("a-peers.json");
        replace(peers, claimRoute(b.certs.server().pin().text()));
        java.util.Set<Thread> before = watchers();
        try (java.net.ServerSocket taken = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress());
             dev.synapsehub.journal.DurableCoordination durable = dev.synapsehub.journal.DurableCoordination.open(
                     dir.resolve("a.db"), dev.synapsehub.core.Clock.system(),
                     dev.synapsehub.core.state.CoordinationState::new, dev.synapsehub.core.actor.ActorSettings.DEFAULTS)) {
            dev.synapsehub.federation.FederationExtension federation = new dev.synapsehub.federation.FederationExtension(
                    new FederationSettings(ServingTrust.none(), WatchSettings.none(),
                            new NamespaceOwners("hub-a", Map.of("proj", "hub-b")), ForwardSettings.none(), null,
                            FederationSettings.RelayPolicy.DEFAULT, ForwardSettings.none(), peers),
                    durable.journal(), dev.synapsehub.federation.follow.SqliteMirror.open(dir.resolve("a.db")));
            dev.synapsehub.net.HubServer server = new dev.synapsehub.net.HubServer(dev.synapsehub.net.HubConfig.builder()
                    .host("127.0.0.1").port(taken.getLocalPort()).hubId("hub-a")
                    .tls(new dev.synapsehub.net.tls.TlsFiles(aCerts.serverFiles().cert(), aCerts.serverFiles().key(), null))
                    .build(), durable.actor(), dev.synapsehub.core.Clock.system(), durable.journal(),
                    new dev.synapsehub.net.extension.HubExtensions(List.of(federation)));
            org.assertj.core.api.Assertions.assertThatThrownBy(server::start).as("the port is taken");
            PeersFile source = (PeersFile) federation.routes();
            assertThat(source.watching()).as("the peers file's watcher").isFalse();
            Await.until("no certificate or peers file watcher left by the failed start", Duration.ofSeconds(20),
                    () -> before.containsAll(watchers()));
        }
    }

    private static java.util.Set<Thread> watchers() {
        java.util.Set<Thread> out = new java.util.HashSet<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.isAlive() && (t.getName().equals("synapse-tls-certificate-watch")
                    || t.getName().equals("synapse-federation-peers-watch")
                    || t.getName().equals("synapse-federation-identity-watch"))) {
                out.add(t);
            }
        }
        return out;
    }

    private String claimRoute(String pin) {
        return "{\"version\":1,\"claim\":[{\"hub_id\":\"hub-b\",\"uri\":\"" + b.uri() + "\",\"pin\":\"" + pin
                + "\"}]}";
    }

    /**
     * Moves {@code text} into place and waits for the hub's check of the file to find it (about a
     * second: the check runs on a thread of its own, peer operations only read what it found).
     */
    private static void edit(FedHub hub, Path file, String text, boolean valid) throws Exception {
        PeersFile source = (PeersFile) hub.federation.routes();
        long loaded = source.loadedEdits();
        long invalid = source.invalidEdits();
        replace(file, text);
        Await.until("the peers file's check finds the edit", Duration.ofSeconds(20),
                () -> valid ? source.loadedEdits() > loaded : source.invalidEdits() > invalid);
    }

    /** Writes {@code text} beside {@code file} and moves it into place, as an operator would. */
    private static void replace(Path file, String text) throws Exception {
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        TestCertificates.writePrivate(tmp, text);
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    private static Optional<Claim> live(FedHub hub, String task) throws Exception {
        double now = System.currentTimeMillis() / 1000.0;
        return hub.durable.actor().read(s -> s.claims().liveClaim(task, now)).get();
    }
}
