package dev.synapsehub.federation.link;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.tls.ClientTls;
import dev.synapsehub.federation.testing.Await;
import dev.synapsehub.federation.testing.FedHub;
import dev.synapsehub.federation.testing.Federation;
import dev.synapsehub.federation.testing.Http;
import dev.synapsehub.federation.testing.Pki;
import dev.synapsehub.federation.testing.TrustFiles;
import dev.synapsehub.federation.trust.ServingTrust;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The client identity's files are stat'ed by its watcher's check only: a peer operation (here a
 * log pull over a real mutual-TLS link on loopback) reads the identity the last check validated
 * and makes no file stat of its own. An edit is in force from the check that finds it; an invalid
 * one refuses every operation, warm link included, until a check finds it fixed.
 */
class ClientIdentityWatchTest {
    static final Duration WAIT = Duration.ofSeconds(30);
    static final long HOUR = 3_600_000;
    @TempDir
    Path dir;

    @Test
    void peerOperationsMakeNoFileStatAndUseWhatTheLastCheckValidated() throws Exception {
        Pki pki = new Pki(dir);
        Pki.HubCerts a = pki.hub("hub-a");
        Path policy = TrustFiles.servingPolicy(dir.resolve("b-trust"), pki.clientCaFile(),
                List.of(TrustFiles.peering("a.example", "proj", "k", List.of(a.client().pin().text()))),
                List.of(new TrustFiles.Grant("hub-a", "a.example", "proj", "k")));
        Path cert = a.clientFiles().cert();
        Path key = a.clientFiles().key();
        AtomicLong stats = new AtomicLong();
        List<String> log = new CopyOnWriteArrayList<>();
        // an hourly watcher: within the test only checkNow() checks, so every stat counted is the check's or an operation's
        try (ClientIdentity identity = ClientIdentity.watching(cert, key, log::add, HOUR, p -> {
                 stats.incrementAndGet();
                 return ClientIdentity.stampOf(p);
             });
             FedHub b = FedHub.serving(pki.hub("hub-b"), dir.resolve("b.db"), ServingTrust.load(policy, m -> { }));
             PeerLink link = new PeerLink("hub-b", b.uri(), ClientTls.pinned(b.certs.server().pin())
                     .withClientCertificate(cert, key), "hub-a", null, WAIT, identity)) {
            long atStart = stats.get();
            assertThat(atStart).as("the start-up check stats both files").isEqualTo(2);
            for (int i = 0; i < 5; i++) {
                assertThat(pull(link).path("log_end_seq").isIntegralNumber()).as("pull " + i).isTrue();
            }
            assertThat(stats.get()).as("five pulls, the first one connecting: no stat").isEqualTo(atStart);

            identity.checkNow();
            assertThat(stats.get()).as("the watcher's check stats both files").isEqualTo(atStart + 2);

            // an edit the check has not found yet: operations still use the identity in force
            Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-r--r--"));
            assertThat(pull(link).path("log_end_seq").isIntegralNumber()).as("not checked yet").isTrue();
            identity.checkNow();
            assertThatThrownBy(() -> pull(link)).as("checked: refused on the warm link")
                    .hasMessageContaining("accessible by other users");
            assertThatThrownBy(() -> pull(link)).hasMessageContaining("does not validate");
            assertThat(identity.invalidEdits()).isEqualTo(1);
            assertThat(log).hasSize(1).first().asString().contains("no longer validates");

            Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-------"));
            identity.checkNow();
            assertThat(pull(link).path("log_end_seq").isIntegralNumber()).as("fixed and checked: served again")
                    .isTrue();
            assertThat(log).hasSize(2).last().asString().contains("validates again");
            assertThat(stats.get()).as("only the three checks stat'ed").isEqualTo(atStart + 6);
        }
    }

    @Test
    void theWatcherThreadChecksOnItsOwnAndStopsWhenClosed() throws Exception {
        Pki.HubCerts a = new Pki(dir).hub("hub-a");
        Path key = a.clientFiles().key();
        ClientIdentity identity = ClientIdentity.watching(a.clientFiles().cert(), key, m -> { });
        try {
            assertThat(identity.isWatching()).isTrue();
            Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-r--r--"));
            Await.until("the watcher finds the world-readable key", WAIT, () -> identity.invalidEdits() == 1);
            assertThatThrownBy(identity::current).hasMessageContaining("accessible by other users");
            Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-------"));
            Await.until("the watcher finds it fixed", WAIT, () -> identity.loadedEdits() == 1);
            assertThat(identity.current().material()).isNotNull();
        } finally {
            identity.close();
        }
        assertThat(identity.isWatching()).isFalse();
        Await.until("no watcher thread left", WAIT, () -> Thread.getAllStackTraces().keySet().stream()
                .noneMatch(t -> t.getName().equals("synapse-federation-identity-watch") && t.isAlive()));
    }

    /** A hub whose client identity does not validate refuses every peer operation: /health says so. */
    @Test
    void anInvalidIdentityHoldsTheHubsHealthDegradedUntilItValidatesAgain() throws Exception {
        Pki.HubCerts a = new Pki(dir).hub("hub-a");
        Path key = a.clientFiles().key();
        try (FedHub hub = new FedHub(a, dir.resolve("a.db"), Federation.follower(a, List.of(), java.util.Map.of()))) {
            ClientIdentity identity = hub.federation.clientIdentity();
            assertThat(Http.get(hub, "/health")).contains("\"status\":\"ok\"");

            Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-r--r--"));
            Await.until("the watcher finds the world-readable key", WAIT, () -> identity.invalidEdits() == 1);
            assertThat(Http.get(hub, "/health")).contains("\"status\":\"degraded\"")
                    .contains("\"reasons\":[\"federation_client_identity_invalid\"]");

            Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-------"));
            Await.until("the watcher finds it fixed", WAIT, () -> identity.loadedEdits() == 1);
            assertThat(Http.get(hub, "/health")).contains("\"status\":\"ok\"");
        }
    }

    /**
     * A check that cannot finish (here the stat itself throws, as a failing disk or an Error would)
     * refuses every peer operation until a check succeeds, logged and counted once: the identity
     * in force before is not served on (fail closed), and the watcher thread goes on checking.
     */
    @Test
    void aCheckThatFailsRefusesEveryOperationUntilOneSucceeds() throws Exception {
        Pki.HubCerts a = new Pki(dir).hub("hub-a");
        java.util.concurrent.atomic.AtomicBoolean broken = new java.util.concurrent.atomic.AtomicBoolean();
        AtomicLong failedStats = new AtomicLong();
        List<String> log = new CopyOnWriteArrayList<>();
        try (ClientIdentity identity = ClientIdentity.watching(a.clientFiles().cert(), a.clientFiles().key(), log::add,
                20, p -> {
                    if (broken.get()) {
                        failedStats.incrementAndGet();
                        throw new IllegalStateException("stat failed: I/O error");
                    }
                    return ClientIdentity.stampOf(p);
                })) {
            assertThat(identity.current().material()).as("validated at start").isNotNull();
            broken.set(true);
            Await.until("a failed check is in force", WAIT, () -> identity.invalidEdits() == 1);
            assertThatThrownBy(identity::current).hasMessageContaining("stat failed: I/O error");
            long seen = failedStats.get();
            Await.until("ten more failing checks", WAIT, () -> failedStats.get() >= seen + 10);
            // the same failure is neither counted nor logged again
            assertThat(identity.invalidEdits()).isEqualTo(1);
            assertThat(log).hasSize(1).first().asString().contains("refused until a check succeeds");
            broken.set(false);
            Await.until("a check succeeds again", WAIT, () -> {
                try {
                    return identity.current().material() != null;
                } catch (java.io.IOException refused) {
                    return false;
                }
            });
        }
    }

    private static ObjectNode pull(PeerLink link) {
        ObjectNode request = JsonNodeFactory.instance.objectNode();
        request.put("type", "multihub_log_request");
        request.put("target", "all");
        request.put("after_seq", 0);
        return link.request(request, "multihub_log_snapshot", WAIT).join();
    }
}
