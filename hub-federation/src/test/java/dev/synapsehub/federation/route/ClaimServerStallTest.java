package dev.synapsehub.federation.route;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.federation.FederationMetrics;
import dev.synapsehub.federation.follow.AdvisoryFold;
import dev.synapsehub.federation.testing.Await;
import dev.synapsehub.federation.testing.FedHub;
import dev.synapsehub.federation.testing.Pki;
import dev.synapsehub.federation.testing.TrustFiles;
import dev.synapsehub.federation.trust.ServingTrust;
import dev.synapsehub.net.extension.ClaimService;
import dev.synapsehub.net.extension.HubServices;
import dev.synapsehub.net.protocol.Request;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A peer's forwarded claims are decided one at a time, in order; one whose decision throws or
 * never ends must not hold the peer's later claims for good (each is logged and counted).
 */
class ClaimServerStallTest {
    @TempDir
    Path dir;
    private FedHub m;
    private HubServices hub;
    private Pki.HubCerts aCerts;
    private final List<HubClient> clients = new CopyOnWriteArrayList<>();

    @BeforeEach
    void start() throws Exception {
        Pki pki = new Pki(dir);
        aCerts = pki.hub("hub-a");
        Path policy = TrustFiles.servingPolicy(dir.resolve("m-trust"), pki.clientCaFile(),
                List.of(TrustFiles.peering("a.example", "proj", "k", List.of(aCerts.client().pin().text()))),
                List.of(new TrustFiles.Grant("hub-a", "a.example", "proj", "k")));
        m = FedHub.serving(pki.hub("hub-m"), dir.resolve("m.db"), ServingTrust.load(policy, msg -> { }));
        hub = m.server.services();
    }

    @AfterEach
    void stop() throws Exception {
        clients.forEach(HubClient::close);
        if (m != null) {
            m.close();
        }
    }

    /** A claim path whose first decision does {@code first}; later ones refuse with their task id. */
    private static ClaimService firstDecision(java.util.function.Consumer<ClaimService.Answer> first, AtomicInteger calls) {
        return new ClaimService() {
            @Override
            public void claimOnBehalf(Request claim, String principal, String ledgerScope, Answer answer) {
                if (calls.incrementAndGet() == 1) {
                    first.accept(answer);
                } else {
                    answer.answer(false, null, "decided " + claim.get("task_id").asText());
                }
            }

            @Override
            public boolean answerIfKeyed(Request claim, String ledgerScope, Answer answer) {
                return false;
            }
        };
    }

    private void forward(ClaimServer server, HubClient a, String task) {
        ObjectNode frame = a.frame("hub-a", "multihub_claim_request");
        frame.put("namespace", "proj").put("claimant", "proj/alice").put("task_id", task);
        ObjectNode claim = a.frame("proj/alice", "claim");
        claim.put("task_id", task);
        claim.putArray("paths").add("src/" + task);
        frame.set("claim", claim);
        server.handle(new Request(hub.registry().session("hub-a"), "hub-a", "multihub_claim_request", "hub-m", frame));
    }

    private HubClient peerA() throws Exception {
        HubClient c = m.connect(m.pinned().withClientCertificate(aCerts.clientFiles().cert(), aCerts.clientFiles().key()));
        c.register("hub-a", null, FedHub.WAIT);
        clients.add(c);
        Await.until("hub-a bound", Duration.ofSeconds(20), () -> hub.registry().session("hub-a") != null);
        return c;
    }

    private ClaimServer server(ClaimService claims, FederationMetrics metrics, long boundSeconds) throws Exception {
        OwnershipResolver owner = new OwnershipResolver(new NamespaceOwners("hub-m", Map.of("proj", "hub-m")),
                new AdvisoryFold());
        return new ClaimServer(hub, ServingTrust.load(dir.resolve("m-trust").resolve("serving-policy.json"), msg -> { }),
                owner, claims, metrics, boundSeconds);
    }

    @Test
    void aDecisionThatThrowsIsAnsweredRefusedAndTheNextIsDecided() throws Exception {
        HubClient a = peerA();
        FederationMetrics metrics = new FederationMetrics();
        ClaimServer server = server(firstDecision(answer -> {
            throw new IllegalStateException("injected fault");
        }, new AtomicInteger()), metrics, 30);
        forward(server, a, "P-1");
        forward(server, a, "P-2");
        ObjectNode first = a.await(f -> "multihub_claim_result".equals(f.path("type").asText())
                && "P-1".equals(f.path("task_id").asText()), FedHub.WAIT);
        assertThat(first.path("granted").asBoolean(true)).isFalse();
        assertThat(first.path("detail").asText()).contains("Internal fault");
        ObjectNode second = a.await(f -> "multihub_claim_result".equals(f.path("type").asText())
                && "P-2".equals(f.path("task_id").asText()), FedHub.WAIT);
        assertThat(second.path("detail").asText()).isEqualTo("decided P-2");
        assertThat(metrics.peerClaimsStalled.get()).isEqualTo(1);
    }

    @Test
    void aDecisionThatNeverEndsHoldsThePeersNextOnlyUntilTheBound() throws Exception {
        HubClient a = peerA();
        FederationMetrics metrics = new FederationMetrics();
        ClaimServer server = server(firstDecision(answer -> { }, new AtomicInteger()), metrics, 1);
        forward(server, a, "Q-1"); // never answered
        forward(server, a, "Q-2");
        ObjectNode second = a.await(f -> "multihub_claim_result".equals(f.path("type").asText())
                && "Q-2".equals(f.path("task_id").asText()), FedHub.WAIT);
        assertThat(second.path("detail").asText()).isEqualTo("decided Q-2");
        Await.until("stall counted", Duration.ofSeconds(10), () -> metrics.peerClaimsStalled.get() == 1);
    }

    @Test
    void theBoundRunsFromWhenADecisionStartsSoTheQueueBehindAStallIsStillDecidedInOrder() throws Exception {
        HubClient a = peerA();
        FederationMetrics metrics = new FederationMetrics();
        java.util.concurrent.ScheduledExecutorService later = java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
        try {
            AtomicInteger calls = new AtomicInteger();
            ClaimService claims = new ClaimService() {
                @Override
                public void claimOnBehalf(Request claim, String principal, String ledgerScope, Answer answer) {
                    int n = calls.incrementAndGet();
                    String task = claim.get("task_id").asText();
                    if (n == 2) { // slow, but within the bound counted from its own start
                        later.schedule(() -> answer.answer(false, null, "decided " + task), 700,
                                java.util.concurrent.TimeUnit.MILLISECONDS);
                    } else if (n > 2) {
                        answer.answer(false, null, "decided " + task);
                    } // the first never ends
                }

                @Override
                public boolean answerIfKeyed(Request claim, String ledgerScope, Answer answer) {
                    return false;
                }
            };
            ClaimServer server = server(claims, metrics, 2);
            forward(server, a, "R-1");
            forward(server, a, "R-2"); // both queued at once: each waits for the one before
            forward(server, a, "R-3");
            java.util.List<String> order = new java.util.concurrent.CopyOnWriteArrayList<>();
            for (int i = 0; i < 2; i++) {
                ObjectNode r = a.await(f -> "multihub_claim_result".equals(f.path("type").asText())
                        && !order.contains(f.path("task_id").asText()), FedHub.WAIT);
                order.add(r.path("task_id").asText());
            }
            assertThat(order).as("in order, the slow second before the third").containsExactly("R-2", "R-3");
            Thread.sleep(500); // a wrongly timed second bound would have fired by now
            assertThat(metrics.peerClaimsStalled.get()).as("only the first stalled").isEqualTo(1);
        } finally {
            later.shutdownNow();
        }
    }
}
