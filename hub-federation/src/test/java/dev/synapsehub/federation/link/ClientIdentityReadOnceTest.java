package dev.synapsehub.federation.link;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.client.tls.ClientTls;
import dev.synapsehub.client.tls.TestCertificates;
import dev.synapsehub.federation.testing.FedHub;
import dev.synapsehub.federation.testing.Pki;
import dev.synapsehub.federation.testing.TrustFiles;
import dev.synapsehub.federation.trust.ServingTrust;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The client certificate a link presents is the one {@link ClientIdentity} read and validated,
 * not a second read of the paths: files swapped after the check (here, to a certificate the peer
 * has no pin for) are not what the handshake presents.
 */
class ClientIdentityReadOnceTest {
    static final Duration WAIT = Duration.ofSeconds(30);
    @TempDir
    Path dir;

    @Test
    void theHandshakePresentsTheValidatedBytesNotWhateverThePathsNameLater() throws Exception {
        Pki pki = new Pki(dir);
        Pki.HubCerts a = pki.hub("hub-a");
        Path policy = TrustFiles.servingPolicy(dir.resolve("b-trust"), pki.clientCaFile(),
                List.of(TrustFiles.peering("a.example", "proj", "k", List.of(a.client().pin().text()))),
                List.of(new TrustFiles.Grant("hub-a", "a.example", "proj", "k")));
        Path live = Files.createDirectories(dir.resolve("a-live"));
        Path cert = live.resolve("client.pem");
        Path key = live.resolve("client.key");
        install(a.client(), "trusted", cert, key);
        ClientIdentity.InForce validated;
        try (ClientIdentity identity = ClientIdentity.watching(cert, key, m -> { }, 3_600_000, ClientIdentity::stampOf)) {
            validated = identity.current();
        }
        // swapped after the check: a certificate from the same CA the peer has no pin for
        install(pki.clientCa().issue("hub-a"), "swapped", cert, key);

        try (FedHub b = FedHub.serving(pki.hub("hub-b"), dir.resolve("b.db"), ServingTrust.load(policy, m -> { }))) {
            ClientTls tls = ClientTls.pinned(b.certs.server().pin()).withClientCertificate(cert, key);
            assertThat(pull(b, tls, validated.material()).path("log_end_seq").isIntegralNumber())
                    .as("the validated certificate was presented and served").isTrue();
            assertThat(pull(b, tls, null).path("log_end_seq").isNull())
                    .as("control: reading the paths again would present the swapped, unpinned certificate").isTrue();
        }
    }

    private static ObjectNode pull(FedHub b, ClientTls tls, dev.synapsehub.client.tls.ClientKeyMaterial material)
            throws Exception {
        try (HubClient c = HubClient.connect(b.uri(), WAIT, tls, true, material)) {
            ObjectNode hello = c.frame("hub-a", "heartbeat");
            hello.put("payload", "online");
            c.send(hello);
            c.awaitWhileOpen(f -> "welcome".equals(f.path("type").asText()), WAIT);
            ObjectNode request = c.frame("hub-a", "multihub_log_request");
            request.put("target", "all");
            request.put("after_seq", 0);
            c.send(request);
            return c.awaitWhileOpen(f -> "multihub_log_snapshot".equals(f.path("type").asText()), WAIT);
        }
    }

    private void install(TestCertificates.Identity identity, String name, Path cert, Path key) throws Exception {
        Path stage = Files.createDirectories(dir.resolve("stage-" + System.nanoTime()));
        TestCertificates.PemPair files = identity.write(stage, name);
        Files.move(files.cert(), cert, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        Files.move(files.key(), key, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }
}
