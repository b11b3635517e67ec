package dev.synapsehub.federation.route;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.federation.FederationMetrics;
import org.junit.jupiter.api.Test;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A leader's forwards still queued on its connector when the node closes are answered as
 * transport failures (the asking node refuses its agent plainly), never dropped unanswered.
 */
class ClaimForwarderCloseTest {

    @Test
    void forwardsDroppedUnsentByACloseAreAnsweredAsTransportFailures() throws Exception {
        ExecutorService connector = Executors.newSingleThreadExecutor();
        CountDownLatch busy = new CountDownLatch(1);
        connector.execute(() -> {
            try {
                busy.await(); // the connector is busy with an earlier send: the forward below waits in its queue
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        ClaimForwarder forwarder = forwarder(connector);
        CompletableFuture<ObjectNode> queued = forwarder.serveForward(forward());
        forwarder.abandon(connector.shutdownNow());
        busy.countDown();
        ObjectNode answer = queued.get(5, TimeUnit.SECONDS);
        assertThat(answer.path("failure").asText()).isEqualTo("transport_failure");
        assertThat(connector.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void aForwardAfterTheConnectorClosedIsAnsweredAtOnce() throws Exception {
        ExecutorService connector = Executors.newSingleThreadExecutor();
        connector.shutdownNow();
        ObjectNode answer = forwarder(connector).serveForward(forward()).get(5, TimeUnit.SECONDS);
        assertThat(answer.path("failure").asText()).isEqualTo("transport_failure");
    }

    private static ClaimForwarder forwarder(ExecutorService connector) {
        // only what serveForward reads before queueing: the clock and the resolver (proj is hub-b's, not partitioned)
        dev.synapsehub.net.extension.HubServices hub = new dev.synapsehub.net.extension.HubServices(null,
                dev.synapsehub.core.Clock.system(), null, null, null, null, "hub-m");
        OwnershipResolver resolver = new OwnershipResolver(new NamespaceOwners("hub-m", java.util.Map.of("proj", "hub-b")),
                new dev.synapsehub.federation.follow.AdvisoryFold());
        return new ClaimForwarder(hub, resolver, null, null, new FederationMetrics(), connector, null, true, null);
    }

    private static ObjectNode forward() {
        ObjectNode body = JsonNodeFactory.instance.objectNode();
        body.put("owner", "hub-b");
        body.put("bound_ms", 5_000);
        body.set("frame", JsonNodeFactory.instance.objectNode().put("type", "multihub_claim_request")
                .put("claimant", "proj/alice"));
        return body;
    }
}
