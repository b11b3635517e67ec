package dev.synapsehub.federation.route;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.core.actor.Outcome;
import dev.synapsehub.core.reply.ProgressNoteReply;
import dev.synapsehub.federation.FederationSettings;
import dev.synapsehub.federation.follow.AdvisoryFold;
import dev.synapsehub.federation.testing.Await;
import dev.synapsehub.federation.testing.FedHub;
import dev.synapsehub.federation.testing.Pki;
import dev.synapsehub.federation.trust.ServingTrust;
import dev.synapsehub.net.extension.HubServices;
import dev.synapsehub.net.protocol.Request;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The owner's answer to a relayed release once the writer decided it: a reply that is neither a
 * grant nor a denial is a fault of this path, and is still answered (the peer never waits on a
 * callback that threw), counted and logged.
 */
class RelayAnswerTest {
    @TempDir
    Path dir;

    @Test
    void aReplyThatIsNeitherGrantNorDenialIsAnsweredInternalFaultAndCounted() throws Exception {
        Pki pki = new Pki(dir);
        try (FedHub b = FedHub.serving(pki.hub("hub-b"), dir.resolve("b.db"), ServingTrust.none())) {
            HubClient peer = b.agent("hub-a");
            HubServices hub = b.server.services();
            Await.until("hub-a bound", Duration.ofSeconds(20), () -> hub.registry().session("hub-a") != null);
            RelayServer relays = new RelayServer(hub, ServingTrust.none(),
                    new OwnershipResolver(NamespaceOwners.none("hub-b"), new AdvisoryFold()),
                    FederationSettings.RelayPolicy.DEFAULT);
            ObjectNode frame = peer.frame("hub-a", "operator_relay_request");
            frame.put("action", "release").put("namespace", "proj").put("task_id", "T-9");
            Request r = new Request(hub.registry().session("hub-a"), "hub-a", "operator_relay_request", "hub-b", frame);
            long faults = hub.metrics().faults.get();

            hub.outbox().executor().submit(() -> relays.answer(r, "proj", "T-9", "op", "released by operator op",
                    new Outcome.Decided(new ProgressNoteReply(null), List.of(), null), null)).get();

            ObjectNode answer = peer.await(f -> "operator_relay_result".equals(f.path("type").asText()), FedHub.WAIT);
            assertThat(answer.path("applied").asBoolean(true)).isFalse();
            assertThat(answer.path("pending").asBoolean(true)).isFalse();
            assertThat(answer.path("detail").asText()).isEqualTo("internal_fault");
            assertThat(answer.path("task_id").asText()).isEqualTo("T-9");
            assertThat(answer.path("owner_hub_id").asText()).isEqualTo("hub-b");
            assertThat(hub.metrics().faults.get()).as("counted as a fault").isEqualTo(faults + 1);
            assertThat(relays.refused()).isEqualTo(1);
        }
    }
}
