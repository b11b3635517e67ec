package dev.synapsehub.federation.testing;

import dev.synapsehub.client.tls.TestCertificates;
import dev.synapsehub.federation.trust.FederationStore;
import dev.synapsehub.federation.trust.PeeringRecord;
import dev.synapsehub.federation.trust.Provenance;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Writes federation stores and serving policies the way an operator would (owner-only files). */
public final class TrustFiles {
    private TrustFiles() {
    }

    /** A peering for {@code domain} naming {@code namespace}, a key label and the given client pins. */
    public static PeeringRecord peering(String domain, String namespace, String keyId, List<String> pins) {
        return new PeeringRecord(domain, List.of(namespace), pins, List.of(keyId), List.of(), null, false,
                new Provenance("test", 1.0, "alice"));
    }

    /** One grant of a serving policy. */
    public record Grant(String sender, String domain, String namespace, String keyId) {
    }

    /**
     * Writes {@code federation.json} with {@code records}, copies the client CA next to it, and
     * writes {@code serving-policy.json} with {@code grants}; returns the policy file.
     */
    public static Path servingPolicy(Path dir, Path clientCa, List<PeeringRecord> records, List<Grant> grants)
            throws Exception {
        Files.createDirectories(dir);
        new FederationStore(records).write(dir.resolve("federation.json"));
        TestCertificates.writePrivate(dir.resolve("client-ca.pem"), Files.readString(clientCa));
        List<String> items = new ArrayList<>();
        for (Grant g : grants) {
            items.add("{\"sender\":\"" + g.sender() + "\",\"domain_id\":\"" + g.domain() + "\",\"namespace\":\""
                    + g.namespace() + "\",\"signing_key_id\":\"" + g.keyId() + "\"}");
        }
        Path policy = dir.resolve("serving-policy.json");
        TestCertificates.writePrivate(policy, "{\"version\":1,\"federation_store\":\"federation.json\","
                + "\"client_ca_file\":\"client-ca.pem\",\"grants\":[" + String.join(",", items) + "]}");
        return policy;
    }

    /** Rewrites a private file (keeps mode 0600). */
    public static void rewrite(Path file, String text) throws IOException {
        TestCertificates.writePrivate(file, text);
    }
}
