package dev.synapsehub.federation.link;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.tls.ClientTls;
import dev.synapsehub.client.tls.TestCertificates;
import dev.synapsehub.federation.testing.Await;
import dev.synapsehub.federation.testing.FedHub;
import dev.synapsehub.federation.testing.Pki;
import dev.synapsehub.federation.testing.TrustFiles;
import dev.synapsehub.federation.trust.ServingTrust;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The client certificate this hub presents to peers is reloaded without a restart: an edit, once
 * the watcher's check has found it, is used by the next operation even on a warm link (the link
 * reconnects), and while the files do not validate every operation is refused, warm link
 * included, until they do again.
 */
class ClientIdentityReloadTest {
    static final Duration WAIT = Duration.ofSeconds(30);
    @TempDir
    Path dir;

    @Test
    void anEditedIdentityIsUsedByTheNextOperationAndAnInvalidOneRefusesEveryOperationUntilItValidates() throws Exception {
        Pki pki = new Pki(dir);
        Pki.HubCerts a = pki.hub("hub-a");
        Path policy = TrustFiles.servingPolicy(dir.resolve("b-trust"), pki.clientCaFile(),
                List.of(TrustFiles.peering("a.example", "proj", "k", List.of(a.client().pin().text()))),
                List.of(new TrustFiles.Grant("hub-a", "a.example", "proj", "k")));
        Path live = Files.createDirectories(dir.resolve("a-live"));
        Path cert = live.resolve("client.pem");
        Path key = live.resolve("client.key");
        install(a.client(), "trusted", cert, key);
        List<String> log = new CopyOnWriteArrayList<>();
        try (ClientIdentity identity = ClientIdentity.watching(cert, key, log::add);
             FedHub b = FedHub.serving(pki.hub("hub-b"), dir.resolve("b.db"), ServingTrust.load(policy, m -> { }));
             PeerLink link = new PeerLink("hub-b", b.uri(), ClientTls.pinned(b.certs.server().pin())
                     .withClientCertificate(cert, key), "hub-a", null, WAIT, identity)) {
            assertThat(pull(link).path("log_end_seq").isIntegralNumber()).as("the trusted identity is served").isTrue();

            // rotated to a certificate hub-b has no pin for: the next pull presents it and is refused
            install(pki.clientCa().issue("hub-a"), "rotated", cert, key);
            awaitInForce(identity, cert, key);
            assertThat(pull(link).path("log_end_seq").isNull()).as("the warm link reconnected with the new identity")
                    .isTrue();
            assertThat(log).anyMatch(l -> l.contains("client identity changed"));

            // a key that does not load: refused before anything is sent, though a connection is open
            replace(key, "-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n");
            Await.until("the watcher finds the unloadable key", WAIT, () -> checkedError(identity).contains("do not load"));
            assertThatThrownBy(() -> pull(link)).isInstanceOf(CompletionException.class)
                    .hasMessageContaining("does not validate");
            // valid again but readable by others: still refused (the start-up file rules)
            install(a.client(), "trusted", cert, key);
            Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-r--r--"));
            Await.until("the watcher finds the world-readable key", WAIT,
                    () -> checkedError(identity).contains("accessible by other users"));
            assertThatThrownBy(() -> pull(link)).hasMessageContaining("accessible by other users");
            assertThat(log).anyMatch(l -> l.contains("no longer validates"));

            Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-------"));
            awaitInForce(identity, cert, key);
            assertThat(pull(link).path("log_end_seq").isIntegralNumber()).as("served again once it validates").isTrue();
            assertThat(log).anyMatch(l -> l.contains("validates again"));
        }
    }

    /**
     * Waits for the watcher's check to put the files' present content in force (an install moves
     * two files: a check between the moves may load a half-installed pair first).
     */
    private static void awaitInForce(ClientIdentity identity, Path cert, Path key) throws Exception {
        Await.until("the watcher puts " + cert + " in force", WAIT, () -> {
            try {
                ClientIdentity.InForce now = identity.current();
                return java.util.Arrays.equals(now.material().certificatePem(), Files.readAllBytes(cert))
                        && java.util.Arrays.equals(now.material().keyPem(), Files.readAllBytes(key));
            } catch (java.io.IOException notYet) {
                return false;
            }
        });
    }

    /** Why the identity is refused, as the last check found it ("" while it validates). */
    private static String checkedError(ClientIdentity identity) {
        try {
            identity.current();
            return "";
        } catch (java.io.IOException e) {
            return e.getMessage();
        }
    }

    private static ObjectNode pull(PeerLink link) {
        ObjectNode request = JsonNodeFactory.instance.objectNode();
        request.put("type", "multihub_log_request");
        request.put("target", "all");
        request.put("after_seq", 0);
        return link.request(request, "multihub_log_snapshot", WAIT).join();
    }

    /** Writes {@code identity} next to the live files and moves each into place (a new file, as an operator's mv). */
    private void install(TestCertificates.Identity identity, String name, Path cert, Path key) throws Exception {
        Path stage = Files.createDirectories(dir.resolve("stage-" + System.nanoTime()));
        TestCertificates.PemPair files = identity.write(stage, name);
        Files.move(files.cert(), cert, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        Files.move(files.key(), key, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    private void replace(Path file, String text) throws Exception {
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        TestCertificates.writePrivate(tmp, text);
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }
}
