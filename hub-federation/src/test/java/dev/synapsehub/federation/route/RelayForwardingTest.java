package dev.synapsehub.federation.route;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.client.tls.TestCertificates;
import dev.synapsehub.core.event.AuditRecordEvent;
import dev.synapsehub.federation.LocalOperator;
import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.federation.AuditJournal;
import dev.synapsehub.federation.FederationSettings;
import dev.synapsehub.federation.follow.AdvisoryFold;
import dev.synapsehub.federation.link.PeerLinks;
import dev.synapsehub.federation.follow.WatchSettings;
import dev.synapsehub.federation.testing.Await;
import dev.synapsehub.federation.testing.FakePeer;
import dev.synapsehub.federation.testing.FedHub;
import dev.synapsehub.federation.testing.Pki;
import dev.synapsehub.federation.testing.TrustFiles;
import dev.synapsehub.federation.trust.ServingTrust;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The forwarding side of operator relays ({@code --relay-peer}, contract A5.1, §11.5, F6) between
 * two real hubs over mutual TLS with certificates made here: hub A, which does not own
 * {@code proj}, relays an operator's {@code operator_relay_request} to the owner B over its
 * pinned, client-certified link and returns B's {@code operator_relay_result}; B decides every
 * gate; {@code idem_key} travels end to end, so a keyed retry never releases twice; a silent,
 * unreachable or wrongly pinned owner is a typed non-applied answer, never a closed socket.
 */
class RelayForwardingTest {
    static final Duration WAIT = Duration.ofSeconds(15);
    @TempDir
    Path dir;
    Pki pki;
    Pki.HubCerts aCerts;
    FedHub b;
    final List<AutoCloseable> open = new ArrayList<>();

    @BeforeEach
    void ownerB() throws Exception {
        pki = new Pki(dir);
        aCerts = pki.hub("hub-a");
        Path policy = TrustFiles.servingPolicy(dir.resolve("b-trust"), pki.clientCaFile(),
                List.of(TrustFiles.peering("a.example", "proj", "k", List.of(aCerts.client().pin().text()))),
                List.of(new TrustFiles.Grant("hub-a", "a.example", "proj", "k")));
        b = keep(new FedHub(pki.hub("hub-b"), dir.resolve("b.db"), new FederationSettings(
                ServingTrust.load(policy, m -> { }), WatchSettings.none(),
                new NamespaceOwners("hub-b", Map.of("proj", "hub-b", "other", "hub-b")), ForwardSettings.none())));
    }

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

    /** Hub A: owns aproj; proj and other belong to hub-b, reached by {@code route}; presents its client certificate. */
    private FedHub relayer(ClaimRoute route, Duration bound) throws Exception {
        return relayer(route, bound, ServingTrust.none());
    }

    private FedHub relayer(ClaimRoute route, Duration bound, ServingTrust trust) throws Exception {
        ForwardSettings relays = route == null ? ForwardSettings.none()
                : new ForwardSettings(ForwardSettings.byHub(List.of(route)), null, aCerts.clientFiles().cert(),
                aCerts.clientFiles().key(), bound);
        return keep(new FedHub(aCerts, dir.resolve("a.db"), new FederationSettings(trust,
                WatchSettings.none(), new NamespaceOwners("hub-a", Map.of("proj", "hub-b", "other", "hub-b",
                "aproj", "hub-a")), ForwardSettings.none(), null, FederationSettings.RelayPolicy.DEFAULT, relays)));
    }

    private FedHub relayer() throws Exception {
        return relayer(new ClaimRoute("hub-b", b.uri(), b.certs.server().pin()), ForwardSettings.BOUND);
    }

    private static ObjectNode relay(HubClient c, String namespace, String task, String reason, String idemKey)
            throws Exception {
        ObjectNode f = c.frame("ops/alice", "operator_relay_request");
        f.put("action", "release").put("namespace", namespace).put("task_id", task).put("operator", "alice")
                .put("origin_hub_id", "somewhere");
        if (reason != null) {
            f.put("reason", reason);
        }
        if (idemKey != null) {
            f.put("idem_key", idemKey);
        }
        c.send(f);
        return c.await(r -> "operator_relay_result".equals(r.path("type").asText())
                && task.equals(r.path("task_id").asText()), WAIT);
    }

    private static boolean live(FedHub hub, String task) throws Exception {
        double now = System.currentTimeMillis() / 1000.0;
        return hub.durable.actor().read(s -> s.claims().liveClaim(task, now)).get().isPresent();
    }

    private static List<JsonNode> journaled(FedHub hub, String kind) throws Exception {
        List<JournaledEvent> rows = hub.durable.actor().read(s -> {
            try {
                return hub.durable.journal().readAfter(0, 1000, Set.of(kind));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }).get();
        List<JsonNode> out = new ArrayList<>();
        for (JournaledEvent e : rows) {
            out.add(e.event() instanceof AuditRecordEvent a
                    ? new com.fasterxml.jackson.databind.ObjectMapper().readTree(a.payloadJson())
                    : com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode());
        }
        return out;
    }

    @Test
    void theOwnerDecidesAForwardedRelayAndItsVerdictComesBack() throws Exception {
        HubClient holder = b.agent("proj/b1");
        assertThat(FedHub.claim(holder, "proj/b1", "T-1", "src/x").path("type").asText()).isEqualTo("claim_granted");
        FedHub a = relayer();
        HubClient operator = a.agent("ops/alice");

        ObjectNode result = relay(operator, "proj", "T-1", "holder crashed", null);
        assertThat(result.path("applied").asBoolean()).as(result.toString()).isTrue();
        assertThat(result.path("pending").asBoolean(true)).isFalse();
        assertThat(result.path("owner_hub_id").asText()).isEqualTo("hub-b");
        assertThat(result.path("detail").asText()).isEqualTo("released by operator alice: holder crashed");
        assertThat(result.path("target").asText()).isEqualTo("ops/alice");
        assertThat(result.path("hub_id").asText()).isEqualTo("hub-a");
        assertThat(result.path("payload").asText()).isEqualTo("Operator relay result");
        assertThat(result.has("forward_error")).isFalse();
        assertThat(live(b, "T-1")).as("released on the owner").isFalse();
        JsonNode released = holder.await(f -> "release_granted".equals(f.path("type").asText()), WAIT);
        assertThat(released.path("task_id").asText()).isEqualTo("T-1");

        // the owner's audit names this hub as the peer and the origin; this hub keeps an outbound record
        List<JsonNode> inbound = journaled(b, "operator_relay");
        assertThat(inbound).hasSize(1);
        assertThat(inbound.get(0).path("peer").asText()).isEqualTo("hub-a");
        assertThat(inbound.get(0).path("origin_hub_id").asText()).isEqualTo("hub-a");
        Await.until("the outbound audit", WAIT, () -> {
            try {
                return journaled(a, "operator_relay").size() == 1;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        JsonNode outbound = journaled(a, "operator_relay").get(0);
        assertThat(outbound.path("direction").asText()).isEqualTo("out");
        assertThat(outbound.path("requester").asText()).isEqualTo("ops/alice");
        assertThat(outbound.path("owner_hub_id").asText()).isEqualTo("hub-b");
        assertThat(outbound.path("applied").asBoolean()).isTrue();
        assertThat(journaled(a, "release")).as("nothing released on the relaying hub").isEmpty();
        assertThat(a.federation.relayForwarder().outcomes("hub-b", "applied")).isEqualTo(1);

        // the owner's refusals come back as they are, naming the owner
        ObjectNode notHeld = relay(operator, "proj", "NOPE", null, null);
        assertThat(notHeld.path("applied").asBoolean(true)).isFalse();
        assertThat(notHeld.path("detail").asText()).isEqualTo("task_not_claimed");
        assertThat(notHeld.path("owner_hub_id").asText()).isEqualTo("hub-b");
        ObjectNode scope = relay(operator, "other", "O-1", null, null);
        assertThat(scope.path("detail").asText()).as("B's grant for hub-a names proj only").isEqualTo("scope_not_granted");
        assertThat(a.federation.relayForwarder().outcomes("hub-b", "refused")).isEqualTo(2);
    }

    @Test
    void aKeyedRetryIsAnsweredFromTheOwnersLedgerAndNeverReleasesTwice() throws Exception {
        HubClient holder = b.agent("proj/b1");
        assertThat(FedHub.claim(holder, "proj/b1", "T-1", "src/x").path("type").asText()).isEqualTo("claim_granted");
        FedHub a = relayer();
        HubClient operator = a.agent("ops/alice");
        ObjectNode first = relay(operator, "proj", "T-1", "stuck", "relay-1");
        assertThat(first.path("applied").asBoolean()).as(first.toString()).isTrue();
        // the holder claims again: an unkeyed second relay would release it again
        assertThat(FedHub.claim(holder, "proj/b1", "T-1", "src/x").path("type").asText()).isEqualTo("claim_granted");

        ObjectNode retry = relay(operator, "proj", "T-1", "stuck", "relay-1");
        assertThat(retry.path("applied").asBoolean()).as(retry.toString()).isTrue();
        assertThat(retry.path("detail").asText()).isEqualTo(first.path("detail").asText());
        assertThat(live(b, "T-1")).as("the retry released nothing").isTrue();
        assertThat(journaled(b, "release")).hasSize(1);
        assertThat(journaled(b, "operator_relay")).hasSize(1);

        ObjectNode changed = relay(operator, "proj", "T-1", "another reason", "relay-1");
        assertThat(changed.path("applied").asBoolean(true)).isFalse();
        assertThat(changed.path("detail").asText()).isEqualTo("idempotency_conflict");
        assertThat(live(b, "T-1")).isTrue();
        assertThat(journaled(b, "release")).hasSize(1);

        ObjectNode unkeyed = relay(operator, "proj", "T-1", "stuck", null);
        assertThat(unkeyed.path("applied").asBoolean()).as("without the key it is a new request").isTrue();
        assertThat(live(b, "T-1")).isFalse();
    }

    /**
     * The leader's send for a mesh node ({@code serveRelay}): a relay the owner read whose link then
     * closed (the leadership listener drops every link when the node loses the lead) is unknown,
     * {@code timeout}, never {@code transport_failure}, which the asking node tells the operator as
     * "the owner never saw it"; a relay that could not be written at all is {@code transport_failure}.
     */
    @Test
    void theLeadersRelayFailsUnknownOnceTheOwnerMayHaveReadItAndUnreachableOnlyWhenNeverWritten() throws Exception {
        FakePeer silent = keep(new FakePeer(pki.hub("hub-s"), r -> null));
        FedHub a = relayer(null, ForwardSettings.BOUND);
        ForwardSettings relays = new ForwardSettings(ForwardSettings.byHub(List.of(
                new ClaimRoute("hub-b", silent.uri(), silent.certs.server().pin()),
                new ClaimRoute("hub-c", java.net.URI.create("wss://127.0.0.1:1/"), null))), null,
                aCerts.clientFiles().cert(), aCerts.clientFiles().key(), ForwardSettings.BOUND);
        PeerLinks links = keep(new PeerLinks("hub-a"));
        java.util.concurrent.ExecutorService connector = java.util.concurrent.Executors.newSingleThreadExecutor();
        open.add(connector::shutdownNow);
        OwnershipResolver resolver = new OwnershipResolver(new NamespaceOwners("hub-a",
                Map.of("proj", "hub-b", "other", "hub-c")), new AdvisoryFold());
        RelayForwarder leader = new RelayForwarder(a.server.services(), resolver, ServingTrust.none(), relays, links,
                connector, new AuditJournal(a.server.services().actor(), "hub-a"));

        java.util.concurrent.CompletableFuture<ObjectNode> read = leader.serveRelay(relayBody("hub-b", "proj", "T-9"));
        Await.until("the owner read the relay", WAIT, () -> silent.requests.get() == 1);
        links.retain(Set.of()); // what this node does when it loses the lead
        ObjectNode unknown = read.get(WAIT.toSeconds(), java.util.concurrent.TimeUnit.SECONDS);
        assertThat(unknown.path("failure").asText()).as(unknown.toString()).isEqualTo("timeout");

        ObjectNode unsent = leader.serveRelay(relayBody("hub-c", "other", "T-10"))
                .get(WAIT.toSeconds(), java.util.concurrent.TimeUnit.SECONDS);
        assertThat(unsent.path("failure").asText()).as("nothing listens there: never written")
                .isEqualTo("transport_failure");
    }

    /** A node that closes answers the relay sends its connector dropped unrun (MeshFederationExtension.close). */
    @Test
    void theLeadersRelaySendsDroppedUnrunAtCloseAreAnswered() throws Exception {
        FedHub a = relayer(null, ForwardSettings.BOUND);
        ForwardSettings relays = new ForwardSettings(ForwardSettings.byHub(List.of(
                new ClaimRoute("hub-b", b.uri(), b.certs.server().pin()))), null,
                aCerts.clientFiles().cert(), aCerts.clientFiles().key(), ForwardSettings.BOUND);
        java.util.concurrent.ExecutorService connector = java.util.concurrent.Executors.newSingleThreadExecutor();
        open.add(connector::shutdownNow);
        java.util.concurrent.CountDownLatch busy = new java.util.concurrent.CountDownLatch(1);
        connector.execute(() -> {
            try {
                busy.await(); // the one connector thread is busy: the relay below waits in its queue
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        RelayForwarder leader = new RelayForwarder(a.server.services(), new OwnershipResolver(new NamespaceOwners(
                "hub-a", Map.of("proj", "hub-b")), new AdvisoryFold()), ServingTrust.none(), relays,
                keep(new PeerLinks("hub-a")), connector, new AuditJournal(a.server.services().actor(), "hub-a"));
        java.util.concurrent.CompletableFuture<ObjectNode> queued = leader.serveRelay(relayBody("hub-b", "proj", "T-11"));
        List<Runnable> dropped = connector.shutdownNow();
        leader.abandon(dropped);
        assertThat(queued).as("answered at close, not left waiting").isDone();
        assertThat(queued.get().path("failure").asText()).isEqualTo("transport_failure");
        busy.countDown();
    }

    /** What a mesh node hands the leader for a relay to {@code owner} ({@code RelayForwarder.askLeader}). */
    private static ObjectNode relayBody(String owner, String namespace, String task) {
        ObjectNode body = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode();
        body.put("owner", owner);
        body.put("bound_ms", 20_000);
        ObjectNode frame = body.putObject("frame");
        frame.put("type", "operator_relay_request").put("target", owner).put("action", "release")
                .put("namespace", namespace).put("task_id", task).put("operator", "alice")
                .put("origin_hub_id", "hub-a").put("idem_key", "k-" + task);
        return body;
    }

    @Test
    void aSilentUnreachableOrWronglyPinnedOwnerIsATypedAnswerAndNothingMore() throws Exception {
        FakePeer silent = keep(new FakePeer(pki.hub("hub-s"), r -> null));
        FedHub a = relayer(new ClaimRoute("hub-b", silent.uri(), silent.certs.server().pin()), Duration.ofSeconds(1));
        HubClient operator = a.agent("ops/alice");
        ObjectNode timeout = relay(operator, "proj", "T-1", null, "k-1");
        assertThat(timeout.path("applied").asBoolean(true)).isFalse();
        assertThat(timeout.path("pending").asBoolean(true)).isFalse();
        assertThat(timeout.path("forward_error").asText()).isEqualTo("timeout");
        assertThat(timeout.path("detail").asText()).isEqualTo("owner_timeout");
        assertThat(timeout.path("owner_hub_id").asText()).isEqualTo("hub-b");
        assertThat(silent.requests.get()).isEqualTo(1);
        assertThat(a.federation.relayForwarder().outcomes("hub-b", "timeout")).isEqualTo(1);
        a.close();
        open.remove(a);

        HubClient holder = b.agent("proj/b1");
        assertThat(FedHub.claim(holder, "proj/b1", "T-2", "src/y").path("type").asText()).isEqualTo("claim_granted");
        FedHub wrongPin = relayer(new ClaimRoute("hub-b", b.uri(), TestCertificates.selfSigned("x").pin()),
                ForwardSettings.BOUND);
        HubClient c = wrongPin.agent("ops/alice");
        ObjectNode refused = relay(c, "proj", "T-2", null, null);
        assertThat(refused.path("applied").asBoolean(true)).isFalse();
        assertThat(refused.path("forward_error").asText()).isEqualTo("transport_failure");
        assertThat(refused.path("detail").asText()).isEqualTo("owner_unreachable");
        assertThat(c.isOpen()).isTrue();
        assertThat(live(b, "T-2")).as("the owner never saw it").isTrue();
        assertThat(journaled(b, "operator_relay")).isEmpty();
    }

    @Test
    void withoutARouteTheRelayIsDecidedHereAndRefused() throws Exception {
        HubClient holder = b.agent("proj/b1");
        assertThat(FedHub.claim(holder, "proj/b1", "T-1", "src/x").path("type").asText()).isEqualTo("claim_granted");
        FedHub a = relayer(null, ForwardSettings.BOUND);
        ObjectNode refused = relay(a.agent("ops/alice"), "proj", "T-1", null, null);
        assertThat(refused.path("applied").asBoolean(true)).isFalse();
        assertThat(refused.path("detail").asText()).as("A has no serving policy").isEqualTo("peer_not_authorised");
        assertThat(refused.path("owner_hub_id").asText()).isEqualTo("hub-a");
        assertThat(refused.has("forward_error")).isFalse();
        assertThat(live(b, "T-1")).isTrue();
    }

    @Test
    void aPeerHubsRelayIsDecidedHereAndNeverRelayedOnwards() throws Exception {
        HubClient holder = b.agent("proj/b1");
        assertThat(FedHub.claim(holder, "proj/b1", "T-1", "src/x").path("type").asText()).isEqualTo("claim_granted");
        Pki.HubCerts cCerts = pki.hub("hub-c");
        Path policy = TrustFiles.servingPolicy(dir.resolve("a-trust"), pki.clientCaFile(),
                List.of(TrustFiles.peering("c.example", "proj", "kc", List.of(cCerts.client().pin().text()))),
                List.of(new TrustFiles.Grant("hub-c", "c.example", "proj", "kc")));
        FedHub a = relayer(new ClaimRoute("hub-b", b.uri(), b.certs.server().pin()), ForwardSettings.BOUND,
                ServingTrust.load(policy, m -> { }));
        HubClient c = a.connect(a.pinned().withClientCertificate(cCerts.clientFiles().cert(), cCerts.clientFiles().key()));
        c.awaitType("welcome", WAIT);
        ObjectNode f = c.frame("hub-c", "operator_relay_request");
        f.put("action", "release").put("namespace", "proj").put("task_id", "T-1").put("operator", "carol")
                .put("origin_hub_id", "hub-c");
        c.send(f);
        ObjectNode result = c.await(r -> "operator_relay_result".equals(r.path("type").asText()), WAIT);
        assertThat(result.path("applied").asBoolean(true)).isFalse();
        assertThat(result.path("detail").asText()).as("A owns no proj; it does not pass C's request on to B")
                .isEqualTo("namespace_not_owned");
        assertThat(result.path("owner_hub_id").asText()).isEqualTo("hub-a");
        assertThat(live(b, "T-1")).isTrue();
        assertThat(journaled(b, "operator_relay")).isEmpty();
        assertThat(a.federation.relayForwarder().outcomes("hub-b", "applied")).isZero();

        // an operator on A's machine, not a peer, is still relayed
        ObjectNode relayed = relay(a.agent("ops/alice"), "proj", "T-1", null, null);
        assertThat(relayed.path("applied").asBoolean()).as(relayed.toString()).isTrue();
        assertThat(live(b, "T-1")).isFalse();
    }

    /**
     * An owner whose host accepts connections and never answers holds up only its own relays:
     * neither a relay to a healthy owner nor the partition refresh waits behind them (each relay
     * to it holds a thread for its connect, 10 s, and more of them than a fixed pool has).
     */
    @Test
    void anOwnerWhoseHostNeverAnswersHoldsUpNoOtherOwnersRelayNorThePartitionRefresh() throws Exception {
        Pki.HubCerts cCerts = pki.hub("hub-c");
        Path cPolicy = TrustFiles.servingPolicy(dir.resolve("c-trust"), pki.clientCaFile(),
                List.of(TrustFiles.peering("a.example", "aproj", "k", List.of(aCerts.client().pin().text()))),
                List.of(new TrustFiles.Grant("hub-a", "a.example", "aproj", "k")));
        // hub-c wrongly grants in aproj, which hub-a owns: once hub-a sees that, aproj is partitioned
        FedHub c = keep(FedHub.serving(cCerts, dir.resolve("c.db"), ServingTrust.load(cPolicy, m -> { })));
        try (java.net.ServerSocket blackhole = new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
            ForwardSettings relays = new ForwardSettings(ForwardSettings.byHub(List.of(
                    new ClaimRoute("hub-b", b.uri(), b.certs.server().pin()),
                    new ClaimRoute("hub-d", java.net.URI.create("wss://127.0.0.1:" + blackhole.getLocalPort() + "/"),
                            b.certs.server().pin()))), null, aCerts.clientFiles().cert(), aCerts.clientFiles().key(),
                    ForwardSettings.BOUND);
            FedHub a = keep(new FedHub(aCerts, dir.resolve("a.db"), new FederationSettings(ServingTrust.none(),
                    dev.synapsehub.federation.testing.Federation.watch(aCerts, List.of(
                            dev.synapsehub.federation.testing.Federation.peer("hub-c", c.uri(), cCerts))),
                    new NamespaceOwners("hub-a", Map.of("proj", "hub-b", "dead", "hub-d", "aproj", "hub-a")),
                    ForwardSettings.none(), null, FederationSettings.RelayPolicy.DEFAULT, relays)));
            HubClient operator = a.agent("ops/alice");
            for (int i = 0; i < 6; i++) { // more than the threads of any fixed pool the hub would size for this
                ObjectNode f = operator.frame("ops/alice", "operator_relay_request");
                f.put("action", "release").put("namespace", "dead").put("task_id", "D-" + i).put("operator", "alice")
                        .put("origin_hub_id", "somewhere");
                operator.send(f);
            }
            // taken in order on the operator's connection: this one comes after every relay to the dead owner
            ObjectNode healthy = relay(operator, "proj", "NOPE", null, null);
            assertThat(healthy.path("detail").asText()).as(healthy.toString()).isEqualTo("task_not_claimed");
            assertThat(healthy.path("owner_hub_id").asText()).isEqualTo("hub-b");
            assertThat(healthy.has("forward_error")).isFalse();
            // answered while every relay to the dead owner was still waiting for it (its connects take 10 s each)
            for (String outcome : List.of("timeout", "transport_failure", "internal_fault")) {
                assertThat(a.federation.relayForwarder().outcomes("hub-d", outcome)).as(outcome).isZero();
            }

            HubClient contester = c.agent("aproj/c1");
            assertThat(FedHub.claim(contester, "aproj/c1", "C-1", "src/c").path("type").asText())
                    .isEqualTo("claim_granted");
            // the refresh runs about once a second; behind six 10 s connects it would take a minute
            Await.until("hub-a journals the partition", WAIT, () -> a.federation.partitions().containsKey("aproj"));
            // the dead owner's relays are answered in turn, as typed failures (the rest at close, unsent)
            ObjectNode refused = operator.await(r -> "operator_relay_result".equals(r.path("type").asText())
                    && "D-0".equals(r.path("task_id").asText()), WAIT.multipliedBy(2));
            assertThat(refused.path("applied").asBoolean(true)).as(refused.toString()).isFalse();
            assertThat(refused.path("owner_hub_id").asText()).isEqualTo("hub-d");
            assertThat(refused.has("forward_error")).isTrue();
        }
    }

    /**
     * On a mesh node the leader sends every node's relays: one to an owner whose host accepts
     * connections and never answers holds up only that owner's, never a relay to a healthy owner.
     */
    @Test
    void theLeadersRelayToAHealthyOwnerWaitsForNoRelayToAnOwnerThatNeverAnswers() throws Exception {
        try (java.net.ServerSocket blackhole = new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
            ForwardSettings relays = new ForwardSettings(ForwardSettings.byHub(List.of(
                    new ClaimRoute("hub-b", b.uri(), b.certs.server().pin()),
                    new ClaimRoute("hub-d", java.net.URI.create("wss://127.0.0.1:" + blackhole.getLocalPort() + "/"),
                            b.certs.server().pin()))), null, aCerts.clientFiles().cert(), aCerts.clientFiles().key(),
                    ForwardSettings.BOUND);
            dev.synapsehub.journal.DurableCoordination durable = dev.synapsehub.journal.DurableCoordination.open(
                    dir.resolve("a.db"), dev.synapsehub.core.Clock.system(),
                    dev.synapsehub.core.state.CoordinationState::new, dev.synapsehub.core.actor.ActorSettings.DEFAULTS);
            open.add(() -> durable.actor().close());
            dev.synapsehub.federation.MeshFederationExtension node = new dev.synapsehub.federation.MeshFederationExtension(
                    ServingTrust.none(), durable.journal(), new NamespaceOwners("hub-a", Map.of("proj", "hub-b",
                    "dead", "hub-d")), null, ForwardSettings.none()).relaying(relays, null);
            Map<String, java.util.function.Function<ObjectNode, java.util.concurrent.CompletableFuture<ObjectNode>>>
                    served = new java.util.concurrent.ConcurrentHashMap<>();
            node.joinCluster(new dev.synapsehub.net.extension.ClusterLeader() { // this node leads
                @Override
                public boolean leadsHere() {
                    return true;
                }

                @Override
                public java.util.concurrent.CompletableFuture<ObjectNode> ask(String service, ObjectNode body,
                                                                              Duration bound) {
                    return served.get(service).apply(body);
                }

                @Override
                public void serve(String service,
                                  java.util.function.Function<ObjectNode, java.util.concurrent.CompletableFuture<ObjectNode>> handler) {
                    served.put(service, handler);
                }

                @Override
                public void onLeadershipChange(Runnable listener) {
                }
            });
            dev.synapsehub.net.HubServer server = new dev.synapsehub.net.HubServer(dev.synapsehub.net.HubConfig.builder()
                    .host("127.0.0.1").port(0).hubId("hub-a").build(), durable.actor(), dev.synapsehub.core.Clock.system(),
                    durable.journal(), new dev.synapsehub.net.extension.HubExtensions(List.of(node)));
            server.start();
            open.add(server::close);
            java.util.function.Function<ObjectNode, java.util.concurrent.CompletableFuture<ObjectNode>> leader =
                    served.get(RelayForwarder.SERVICE);
            List<java.util.concurrent.CompletableFuture<ObjectNode>> stuck = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                stuck.add(leader.apply(relayBody("hub-d", "dead", "D-" + i)));
            }
            ObjectNode healthy = leader.apply(relayBody("hub-b", "proj", "NOPE"))
                    .get(WAIT.toSeconds(), java.util.concurrent.TimeUnit.SECONDS); // behind three 10 s connects: 30 s
            assertThat(healthy.path("result").path("detail").asText()).as(healthy.toString()).isEqualTo("task_not_claimed");
            assertThat(stuck).as("the dead owner's relays still wait for it").noneMatch(java.util.concurrent.Future::isDone);
        }
    }

    /**
     * Relays to an owner whose host accepts and never answers are each answered by the bound, not
     * after every earlier relay's connect (10 s each): the one being sent as a timeout (unknown),
     * those still waiting for the owner's turn as unsent, and never sent afterwards.
     */
    @Test
    void relaysWaitingBehindAnOwnerThatNeverAnswersAreAnsweredByTheBound() throws Exception {
        try (java.net.ServerSocket blackhole = new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
            FedHub a = relayer(new ClaimRoute("hub-b", java.net.URI.create("wss://127.0.0.1:" + blackhole.getLocalPort()
                    + "/"), b.certs.server().pin()), Duration.ofSeconds(2));
            HubClient operator = a.agent("ops/alice");
            long start = System.nanoTime();
            for (int i = 0; i < 3; i++) {
                ObjectNode f = operator.frame("ops/alice", "operator_relay_request");
                f.put("action", "release").put("namespace", "proj").put("task_id", "Q-" + i).put("operator", "alice")
                        .put("origin_hub_id", "somewhere");
                operator.send(f);
            }
            Map<String, ObjectNode> answers = new java.util.HashMap<>();
            for (int i = 0; i < 3; i++) {
                ObjectNode r = operator.await(f -> "operator_relay_result".equals(f.path("type").asText()), WAIT);
                answers.put(r.path("task_id").asText(), r);
            }
            long tookMs = (System.nanoTime() - start) / 1_000_000;
            // the first relay's connect alone lasts 10 s: all three answered before it ends
            assertThat(tookMs).as("answered by the 2 s bound, not behind 10 s connects").isLessThan(8_000);
            assertThat(answers.get("Q-0").path("detail").asText()).as(answers.toString()).isEqualTo("owner_timeout");
            assertThat(answers.get("Q-0").path("forward_error").asText()).isEqualTo("timeout");
            for (String queued : List.of("Q-1", "Q-2")) {
                assertThat(answers.get(queued).path("applied").asBoolean(true)).isFalse();
                assertThat(answers.get(queued).path("detail").asText()).as(queued).isEqualTo("owner_unreachable");
                assertThat(answers.get(queued).path("forward_error").asText()).isEqualTo("transport_failure");
            }
            assertThat(a.federation.relayForwarder().outcomes("hub-b", "transport_failure")).isEqualTo(2);
            assertThat(a.federation.relayForwarder().outcomes("hub-b", "timeout")).isEqualTo(1);
        }
    }

    /** The leader's side: a relay still queued behind a dead owner's connect when its bound passes is answered unsent. */
    @Test
    void theLeadersRelayQueuedBehindAnOwnerThatNeverAnswersIsAnsweredUnsentByItsBound() throws Exception {
        FedHub a = relayer(null, ForwardSettings.BOUND);
        try (java.net.ServerSocket blackhole = new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
            ForwardSettings relays = new ForwardSettings(ForwardSettings.byHub(List.of(new ClaimRoute("hub-d",
                    java.net.URI.create("wss://127.0.0.1:" + blackhole.getLocalPort() + "/"), b.certs.server().pin()))),
                    null, aCerts.clientFiles().cert(), aCerts.clientFiles().key(), ForwardSettings.BOUND);
            java.util.concurrent.ExecutorService connector = ClaimForwarder.connector("test-relay-forwarding");
            open.add(connector::shutdownNow);
            RelayForwarder leader = new RelayForwarder(a.server.services(), new OwnershipResolver(new NamespaceOwners(
                    "hub-a", Map.of("dead", "hub-d")), new AdvisoryFold()), ServingTrust.none(), relays,
                    keep(new PeerLinks("hub-a")), connector, new AuditJournal(a.server.services().actor(), "hub-a"));
            List<java.util.concurrent.CompletableFuture<ObjectNode>> sent = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                ObjectNode body = relayBody("hub-d", "dead", "D-" + i);
                body.put("bound_ms", 2_000);
                sent.add(leader.serveRelay(body));
            }
            for (int i = 1; i < 3; i++) { // the first one's connect lasts 10 s
                ObjectNode answer = sent.get(i).get(8, java.util.concurrent.TimeUnit.SECONDS);
                assertThat(answer.path("failure").asText()).as(answer.toString()).isEqualTo("transport_failure");
                assertThat(answer.path("detail").asText()).contains("it was not sent");
            }
        }
    }

    @Test
    void onlyALoopbackRequesterIsRelayed() {
        assertThat(LocalOperator.onThisMachine("127.0.0.1")).isTrue();
        assertThat(LocalOperator.onThisMachine("::1")).isTrue();
        assertThat(LocalOperator.onThisMachine("0:0:0:0:0:0:0:1")).isTrue();
        assertThat(LocalOperator.onThisMachine("10.0.0.7")).isFalse();
        assertThat(LocalOperator.onThisMachine(null)).isFalse();
    }
}
