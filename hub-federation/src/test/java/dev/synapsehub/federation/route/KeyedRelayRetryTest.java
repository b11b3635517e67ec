package dev.synapsehub.federation.route;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.federation.FederationSettings;
import dev.synapsehub.federation.follow.WatchSettings;
import dev.synapsehub.federation.testing.FedHub;
import dev.synapsehub.federation.testing.Pki;
import dev.synapsehub.federation.testing.TrustFiles;
import dev.synapsehub.federation.trust.ServingTrust;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A keyed operator_relay_request that was applied gets its first answer when retried, also
 * after a restart that moved the namespace's ownership: the idempotency ledger is consulted
 * right after the peer is authenticated, before the gates of the present moment (INV-CR-1),
 * as ClaimServer does for a keyed forwarded claim.
 */
class KeyedRelayRetryTest {
    @TempDir
    Path dir;

    private FedHub owner(Pki pki, Pki.HubCerts a, Map<String, String> owners) throws Exception {
        Path policy = TrustFiles.servingPolicy(dir.resolve("b-trust"), pki.clientCaFile(),
                List.of(TrustFiles.peering("a.example", "proj", "k", List.of(a.client().pin().text()))),
                List.of(new TrustFiles.Grant("hub-a", "a.example", "proj", "k")));
        return new FedHub(pki.hub("hub-b"), dir.resolve("b.db"), new FederationSettings(
                ServingTrust.load(policy, m -> { }), WatchSettings.none(),
                new NamespaceOwners("hub-b", owners), ForwardSettings.none(), null,
                new FederationSettings.RelayPolicy(false, false)));
    }

    private static ObjectNode keyedRelay(FedHub b, Pki.HubCerts a) throws Exception {
        HubClient c = b.connect(b.pinned().withClientCertificate(a.clientFiles().cert(), a.clientFiles().key()));
        c.awaitType("welcome", FedHub.WAIT);
        c.send(c.frame("hub-a", "heartbeat"));
        ObjectNode f = c.frame("hub-a", "operator_relay_request");
        f.put("action", "release").put("namespace", "proj").put("task_id", "T-1").put("operator", "alice")
                .put("origin_hub_id", "hub-a").put("reason", "holder crashed").put("idem_key", "relay-k1");
        c.send(f);
        return c.await(r -> "operator_relay_result".equals(r.path("type").asText()), FedHub.WAIT);
    }

    @Test
    void aKeyedRelayRetryAfterARestartGetsItsFirstAnswer() throws Exception {
        Pki pki = new Pki(dir);
        Pki.HubCerts a = pki.hub("hub-a");
        ObjectNode first;
        try (FedHub b = owner(pki, a, Map.of("proj", "hub-b"))) {
            HubClient agent = b.agent("proj/b1");
            assertThat(FedHub.claim(agent, "proj/b1", "T-1", "src/x").path("type").asText()).isEqualTo("claim_granted");
            first = keyedRelay(b, a);
            assertThat(first.path("applied").asBoolean()).isTrue();
        }
        // restarted; the namespace's ownership moved meanwhile (a present-moment fact, like a partition)
        try (FedHub b = owner(pki, a, Map.of("proj", "hub-c"))) {
            ObjectNode retry = keyedRelay(b, a);
            assertThat(retry.path("detail").asText()).as("the keyed retry's answer").isEqualTo(first.path("detail").asText());
            assertThat(retry.path("applied").asBoolean()).isTrue();
        }
    }
}
