package dev.synapsehub.federation.route;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.federation.FederationSettings;
import dev.synapsehub.federation.follow.PollBudget;
import dev.synapsehub.federation.follow.WatchPeer;
import dev.synapsehub.federation.follow.WatchSettings;
import dev.synapsehub.federation.testing.Await;
import dev.synapsehub.federation.testing.FaultProxy;
import dev.synapsehub.federation.testing.FedHub;
import dev.synapsehub.federation.testing.Pki;
import dev.synapsehub.federation.testing.TrustFiles;
import dev.synapsehub.federation.trust.ServingTrust;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Hub-to-hub faults through a loopback proxy: an owner that stops answering (timeout), a cut
 * connection and an owner that is gone (plain refusal), and recovery once the path is back;
 * the watch keeps its cursor and last observation through the same faults. Nothing is granted
 * that should not be, and nothing the owner granted is lost.
 */
class FaultInjectionTest {
    static final Duration WAIT = Duration.ofSeconds(15);
    @TempDir
    Path dir;
    final List<AutoCloseable> open = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    private <T extends AutoCloseable> T keep(T c) {
        open.add(c);
        return c;
    }

    @Test
    void forwardingAndWatchingSurviveASilentOwnerACutAndAnOwnerThatIsGone() throws Exception {
        Pki pki = new Pki(dir);
        Pki.HubCerts aCerts = pki.hub("hub-a");
        Path policy = TrustFiles.servingPolicy(dir.resolve("b-trust"), pki.clientCaFile(),
                List.of(TrustFiles.peering("a.example", "proj", "k", List.of(aCerts.client().pin().text()))),
                List.of(new TrustFiles.Grant("hub-a", "a.example", "proj", "k")));
        FaultProxy proxy = new FaultProxy(0);
        // peers reach hub-b through the proxy's port, so hub-b admits that Host (--advertised-host)
        FedHub b = keep(new FedHub(pki.hub("hub-b"), dir.resolve("b.db"), new FederationSettings(
                ServingTrust.load(policy, m -> { }), WatchSettings.none(),
                new NamespaceOwners("hub-b", Map.of("proj", "hub-b")), ForwardSettings.none()),
                c -> c.advertisedHost("127.0.0.1:" + proxy.port())));
        keep(proxy);
        proxy.target(b.server.boundPort());
        ClaimRoute route = new ClaimRoute("hub-b", proxy.uri(), b.certs.server().pin());
        WatchSettings watch = new WatchSettings(List.of(new WatchPeer("hub-b", proxy.uri(), b.certs.server().pin())),
                Duration.ofSeconds(1), null, aCerts.clientFiles().cert(), aCerts.clientFiles().key(), PollBudget.DEFAULT,
                Duration.ofSeconds(1));
        FedHub a = keep(new FedHub(aCerts, dir.resolve("a.db"), new FederationSettings(ServingTrust.none(), watch,
                new NamespaceOwners("hub-a", Map.of("proj", "hub-b")), new ForwardSettings(
                ForwardSettings.byHub(List.of(route)), null, aCerts.clientFiles().cert(), aCerts.clientFiles().key(),
                Duration.ofSeconds(1)))));
        HubClient agent = a.agent("proj/a1");

        assertThat(FedHub.claim(agent, "proj/a1", "T-1", "src/1").path("type").asText()).isEqualTo("claim_granted");
        Await.until("the watch folds the grant", WAIT,
                () -> a.federation.fold().peer("hub-b").claims().containsKey("T-1"));
        long cursor = a.federation.fold().peer("hub-b").cursor();

        proxy.mode(FaultProxy.Mode.SWALLOW); // the owner stops answering
        ObjectNode timedOut = FedHub.claim(agent, "proj/a1", "T-2", "src/2");
        assertThat(timedOut.path("forward_error").asText()).isEqualTo("timeout");
        Await.until("a watch poll fails", WAIT, () -> a.federation.fold().peer("hub-b").lastError() != null);
        assertThat(a.federation.fold().peer("hub-b").cursor()).isEqualTo(cursor);
        assertThat(a.federation.fold().peer("hub-b").claims()).containsKey("T-1"); // the last observation stays

        proxy.mode(FaultProxy.Mode.PASS);
        proxy.cut();
        // T-2 may have been granted by the owner after the timeout: a retry learns the truth from it
        ObjectNode retried = FedHub.claim(agent, "proj/a1", "T-2", "src/2");
        assertThat(retried.path("type").asText()).isEqualTo("claim_granted");
        long epochT2 = retried.path("epoch").asLong();
        assertThat(FedHub.claim(agent, "proj/a1", "T-2", "src/2").path("epoch").asLong()).isEqualTo(epochT2);
        Await.until("the watch recovers", WAIT, () -> a.federation.fold().peer("hub-b").lastError() == null
                && a.federation.fold().peer("hub-b").claims().containsKey("T-2"));

        proxy.close(); // the owner is gone
        ObjectNode gone = FedHub.claim(agent, "proj/a1", "T-3", "src/3");
        assertThat(gone.path("type").asText()).isEqualTo("claim_denied");
        assertThat(gone.path("ownership").asText()).isEqualTo("remote");
        assertThat(gone.has("forward_error")).isFalse();
        assertThat(agent.isOpen()).isTrue();
        double now = System.currentTimeMillis() / 1000.0;
        assertThat(b.durable.actor().read(s -> s.claims().liveClaim("T-3", now)).get()).isEmpty();
        assertThat(b.durable.actor().read(s -> s.claims().liveClaim("T-1", now)).get()).isPresent();
        assertThat(a.durable.actor().read(s -> s.claims().liveCount()).get()).isZero();
    }
}
