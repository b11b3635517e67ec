package dev.synapsehub.federation.route;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.federation.FederationMetrics;
import dev.synapsehub.federation.follow.AdvisoryFold;
import dev.synapsehub.federation.testing.Await;
import dev.synapsehub.federation.testing.FedHub;
import dev.synapsehub.federation.testing.Pki;
import dev.synapsehub.federation.trust.ServingTrust;
import dev.synapsehub.net.extension.HubServices;
import dev.synapsehub.net.protocol.Request;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A single hub's forward of a claim arriving while the hub closes (its connector refuses new
 * sends) is still answered: the agent hears the plain refusal of a failed forward at once, and
 * the forward is counted as a transport failure, never left without an answer.
 */
class ClaimForwarderShutdownTest {
    @TempDir
    Path dir;

    @Test
    void aForwardTheClosingConnectorRefusesIsAnsweredThePlainRefusalAndCounted() throws Exception {
        Pki pki = new Pki(dir);
        try (FedHub m = FedHub.serving(pki.hub("hub-m"), dir.resolve("m.db"), ServingTrust.none())) {
            HubClient alice = m.agent("proj/alice");
            HubServices hub = m.server.services();
            Await.until("alice bound", Duration.ofSeconds(20), () -> hub.registry().session("proj/alice") != null);
            ForwardSettings settings = new ForwardSettings(Map.of("hub-b",
                    new ClaimRoute("hub-b", URI.create("wss://127.0.0.1:1/"), null)), null, null, null,
                    ForwardSettings.BOUND);
            ExecutorService connector = Executors.newSingleThreadExecutor();
            connector.shutdownNow(); // the hub is closing: its connector takes no more sends
            FederationMetrics metrics = new FederationMetrics();
            ClaimForwarder forwarder = new ClaimForwarder(hub, new OwnershipResolver(
                    new NamespaceOwners("hub-m", Map.of("proj", "hub-b")), new AdvisoryFold()), settings, null, metrics,
                    connector);
            ObjectNode frame = alice.frame("proj/alice", "claim");
            frame.put("task_id", "T-1");
            frame.putArray("paths").add("src/a");
            Request claim = new Request(hub.registry().session("proj/alice"), "proj/alice", "claim", null, frame);

            assertThat(forwarder.claimIsLocal(claim)).isFalse();

            ObjectNode answer = alice.await(f -> "claim_denied".equals(f.path("type").asText())
                    && "T-1".equals(f.path("task_id").asText()), FedHub.WAIT);
            assertThat(answer.path("ownership").asText()).isEqualTo("remote");
            assertThat(answer.path("owner_hub_id").asText()).isEqualTo("hub-b");
            assertThat(answer.path("namespace").asText()).isEqualTo("proj");
            assertThat(answer.has("forward_error")).as("not a timeout: the send never ran").isFalse();
            assertThat(metrics.forwardedClaims.get()).isEqualTo(1);
            assertThat(metrics.forwardedClaimsDenied.get()).isEqualTo(1);
            assertThat(metrics.forwardOutcomes.get("hub-b", "transport_failure")).isEqualTo(1);
        }
    }
}
