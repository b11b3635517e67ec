package dev.synapsehub.federation.serve;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.federation.FederationSettings;
import dev.synapsehub.federation.follow.WatchSettings;
import dev.synapsehub.federation.route.ForwardSettings;
import dev.synapsehub.federation.route.NamespaceOwners;
import dev.synapsehub.federation.testing.FedHub;
import dev.synapsehub.federation.testing.Pki;
import dev.synapsehub.federation.trust.ServingTrust;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code federation_offer_request} over a socket (contract A4): the private
 * {@code federation_offer} carries the bundle's fields as top-level members (domain id trimmed,
 * the three id lists sorted, scope grants in file order, other file members dropped), the file is
 * read again on every request, and a file deleted after start-up is the contract's
 * "unavailable" error.
 */
class OfferServingTest {
    @TempDir
    Path dir;

    private static JsonNode ask(HubClient c) throws Exception {
        c.send(c.frame("ops/alice", "federation_offer_request"));
        return c.await(f -> "federation_offer".equals(f.path("type").asText()) || "error".equals(f.path("type").asText()),
                FedHub.WAIT);
    }

    @Test
    void theOfferIsTheFilesBundleReadAtEachRequestAndAMissingFileIsUnavailable() throws Exception {
        Pki pki = new Pki(dir);
        Path offer = dir.resolve("offer.json");
        String pin = "sha256:" + "a".repeat(64);
        Files.writeString(offer, "{\"domain_id\":\" b.example \",\"namespaces\":[\"proj\",\"ops\"],"
                + "\"certificate_pins\":[\"" + pin + "\"],\"signing_key_ids\":[\"k2\",\"k1\"],"
                + "\"scope_grants\":[{\"verb\":\"release\",\"namespace\":\"proj\"},{\"verb\":\"claim\","
                + "\"namespace\":\"ops\"}],\"expires_at\":1900000000}");
        try (FedHub hub = new FedHub(pki.hub("hub-b"), dir.resolve("b.db"), new FederationSettings(ServingTrust.none(),
                WatchSettings.none(), NamespaceOwners.none("hub-b"), ForwardSettings.none(), offer))) {
            HubClient c = hub.agent("ops/alice");
            JsonNode f = ask(c);
            assertThat(f.path("type").asText()).as(f.toString()).isEqualTo("federation_offer");
            assertThat(f.path("target").asText()).isEqualTo("ops/alice");
            assertThat(f.path("payload").asText()).isEqualTo("Federation-bundle offer");
            assertThat(f.path("domain_id").asText()).isEqualTo("b.example");
            assertThat(f.path("namespaces").toString()).isEqualTo("[\"ops\",\"proj\"]");
            assertThat(f.path("signing_key_ids").toString()).isEqualTo("[\"k1\",\"k2\"]");
            assertThat(f.path("certificate_pins").toString()).isEqualTo("[\"" + pin + "\"]");
            assertThat(f.path("scope_grants").toString())
                    .isEqualTo("[{\"verb\":\"release\",\"namespace\":\"proj\"},{\"verb\":\"claim\",\"namespace\":\"ops\"}]");
            assertThat(f.path("expires_at").asLong()).isEqualTo(1900000000L);
            assertThat(f.path("revoked").isBoolean()).isTrue();
            assertThat(f.path("revoked").asBoolean()).isFalse();
            assertThat(f.has("provenance")).isFalse();

            // re-read on every request: a revoked bundle is offered as such
            Files.writeString(offer, Files.readString(offer).replace("\"expires_at\":1900000000",
                    "\"expires_at\":null,\"revoked\":true"));
            JsonNode revoked = ask(c);
            assertThat(revoked.path("revoked").asBoolean()).as(revoked.toString()).isTrue();
            assertThat(revoked.path("expires_at").isNull()).isTrue();

            Files.delete(offer);
            JsonNode gone = ask(c);
            assertThat(gone.path("type").asText()).isEqualTo("error");
            assertThat(gone.path("payload").asText()).isEqualTo("The federation offer on this hub is unavailable.");
            assertThat(c.isOpen()).isTrue();
        }
    }
}
