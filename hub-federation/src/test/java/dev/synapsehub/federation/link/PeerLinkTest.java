package dev.synapsehub.federation.link;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.tls.ClientTls;
import dev.synapsehub.federation.testing.Await;
import dev.synapsehub.federation.testing.FedHub;
import dev.synapsehub.federation.testing.Http;
import dev.synapsehub.federation.testing.Pki;
import dev.synapsehub.federation.testing.TrustFiles;
import dev.synapsehub.federation.trust.ServingTrust;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The warm link to a peer: operations that need a connection at the same moment (the watch's
 * poll and a forwarded claim, right after the peer restarted) share one. Two would both register
 * this hub's id on the peer; the second is refused {@code name_conflict} and the first, orphaned,
 * keeps the name, so every later operation on the link would be refused too.
 */
class PeerLinkTest {
    static final Duration WAIT = Duration.ofSeconds(30);
    @TempDir
    Path dir;

    @Test
    void operationsStartedTogetherOnAColdLinkOpenOneConnectionAndAllSucceed() throws Exception {
        Pki pki = new Pki(dir);
        Pki.HubCerts a = pki.hub("hub-a");
        Path policy = TrustFiles.servingPolicy(dir.resolve("b-trust"), pki.clientCaFile(),
                List.of(TrustFiles.peering("a.example", "proj", "k", List.of(a.client().pin().text()))),
                List.of(new TrustFiles.Grant("hub-a", "a.example", "proj", "k")));
        int parallel = 4;
        ExecutorService threads = Executors.newFixedThreadPool(parallel);
        try (FedHub b = FedHub.serving(pki.hub("hub-b"), dir.resolve("b.db"), ServingTrust.load(policy, m -> { }));
             PeerLink link = new PeerLink("hub-b", b.uri(), ClientTls.pinned(b.certs.server().pin())
                     .withClientCertificate(a.clientFiles().cert(), a.clientFiles().key()), "hub-a", null, WAIT)) {
            CountDownLatch go = new CountDownLatch(1);
            List<CompletableFuture<ObjectNode>> replies = new ArrayList<>();
            for (int i = 0; i < parallel; i++) {
                replies.add(CompletableFuture.supplyAsync(() -> {
                    try {
                        go.await();
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                    ObjectNode request = JsonNodeFactory.instance.objectNode();
                    request.put("type", "multihub_log_request");
                    request.put("target", "all");
                    request.put("after_seq", 0);
                    return link.request(request, "multihub_log_snapshot", WAIT).join();
                }, threads));
            }
            go.countDown();
            for (CompletableFuture<ObjectNode> r : replies) {
                assertThat(r.get(WAIT.toSeconds() * 2, TimeUnit.SECONDS).path("log_end_seq").isIntegralNumber()).isTrue();
            }
            Await.until("the peer counts the link's connection", WAIT,
                    () -> metric(b, "synapse_connected_clients") >= 1);
            assertThat(metric(b, "synapse_connected_clients")).isEqualTo(1);
        } finally {
            threads.shutdownNow();
        }
    }

    @Test
    void aSendThatMayNotConnectGoesOnlyOverTheConnectionAlreadyOpen() throws Exception {
        Pki pki = new Pki(dir);
        Pki.HubCerts a = pki.hub("hub-a");
        Path policy = TrustFiles.servingPolicy(dir.resolve("b-trust"), pki.clientCaFile(),
                List.of(TrustFiles.peering("a.example", "proj", "k", List.of(a.client().pin().text()))),
                List.of(new TrustFiles.Grant("hub-a", "a.example", "proj", "k")));
        try (FedHub b = FedHub.serving(pki.hub("hub-b"), dir.resolve("b.db"), ServingTrust.load(policy, m -> { }));
             PeerLink link = new PeerLink("hub-b", b.uri(), ClientTls.pinned(b.certs.server().pin())
                     .withClientCertificate(a.clientFiles().cert(), a.clientFiles().key()), "hub-a", null, WAIT)) {
            assertThat(link.requestIfConnected(logRequest(), "multihub_log_snapshot", r -> true, WAIT))
                    .as("a cold link: nothing sent, no connection made").isNull();
            assertThat(metric(b, "synapse_connected_clients")).isZero();

            link.request(logRequest(), "multihub_log_snapshot", WAIT).get(WAIT.toSeconds(), TimeUnit.SECONDS);
            CompletableFuture<ObjectNode> warm = link.requestIfConnected(logRequest(), "multihub_log_snapshot",
                    r -> true, WAIT);
            assertThat(warm).isNotNull();
            assertThat(warm.get(WAIT.toSeconds(), TimeUnit.SECONDS).path("log_end_seq").isIntegralNumber()).isTrue();
            assertThat(metric(b, "synapse_connected_clients")).isEqualTo(1);
        }
    }

    private static ObjectNode logRequest() {
        ObjectNode request = JsonNodeFactory.instance.objectNode();
        request.put("type", "multihub_log_request");
        request.put("target", "all");
        request.put("after_seq", 0);
        return request;
    }

    private static long metric(FedHub hub, String name) {
        try {
            for (String line : Http.get(hub, "/metrics").split("\n")) {
                if (line.startsWith(name + " ")) {
                    return (long) Double.parseDouble(line.substring(name.length() + 1).trim());
                }
            }
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        throw new AssertionError("no " + name);
    }
}
