package dev.synapsehub.federation.route;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.client.tls.TestCertificates;
import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.federation.FederationSettings;
import dev.synapsehub.federation.follow.WatchSettings;
import dev.synapsehub.federation.testing.FakePeer;
import dev.synapsehub.federation.testing.FedHub;
import dev.synapsehub.federation.testing.Http;
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
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Namespace ownership and claim forwarding (contract §11.3) between real hubs over mutual TLS:
 * only the owner grants (INV-MH-1), routing is deny by default on both sides (INV-MH-3), and
 * every relay shape: granted, denied, timeout, transport failure, ungoverned, no route.
 */
class ForwardingTest {
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
        Pki.HubCerts bCerts = pki.hub("hub-b");
        b = keep(new FedHub(bCerts, dir.resolve("b.db"), new FederationSettings(ServingTrust.load(policy, m -> { }),
                WatchSettings.none(), new NamespaceOwners("hub-b", Map.of("proj", "hub-b", "other", "hub-c")),
                ForwardSettings.none())));
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

    /** Hub A: owns aproj, forwards proj to {@code route}, presents its client certificate. */
    private FedHub forwarder(ClaimRoute route, Duration bound) throws Exception {
        return forwarder(route, bound, aCerts.clientFiles());
    }

    /** As {@link #forwarder(ClaimRoute, Duration)}, presenting the certificate in {@code client}. */
    private FedHub forwarder(ClaimRoute route, Duration bound, TestCertificates.PemPair client) throws Exception {
        ForwardSettings forward = new ForwardSettings(ForwardSettings.byHub(List.of(route)), null,
                client.cert(), client.key(), bound);
        return keep(new FedHub(aCerts, dir.resolve("a.db"), new FederationSettings(ServingTrust.none(),
                WatchSettings.none(), new NamespaceOwners("hub-a", Map.of("proj", "hub-b", "aproj", "hub-a",
                "other", "hub-c")), forward)));
    }

    private FedHub forwarder() throws Exception {
        return forwarder(new ClaimRoute("hub-b", b.uri(), b.certs.server().pin()), ForwardSettings.BOUND);
    }

    private static Optional<Claim> live(FedHub hub, String task) throws Exception {
        double now = System.currentTimeMillis() / 1000.0;
        return hub.durable.actor().read(s -> s.claims().liveClaim(task, now)).get();
    }

    @Test
    void onlyTheOwnerGrantsAndTheForwarderRelaysItsVerdicts() throws Exception {
        FedHub a = forwarder();
        HubClient a1 = a.agent("proj/a1");
        ObjectNode granted = FedHub.claim(a1, "proj/a1", "T-1", "src/x.py");
        assertThat(granted.path("type").asText()).as(granted.toString()).isEqualTo("claim_granted");
        assertThat(granted.path("target").asText()).isEqualTo("proj/a1");
        assertThat(granted.path("hub_id").asText()).isEqualTo("hub-a");
        long epoch = granted.path("epoch").asLong();
        // INV-MH-1: the grant lives on the owner, charged to the forwarding hub; nothing here
        Claim onB = live(b, "T-1").orElseThrow();
        assertThat(onB.owner()).isEqualTo("proj/a1");
        assertThat(onB.principal()).isEqualTo("federation-peer:hub-a");
        assertThat(onB.epoch()).isEqualTo(epoch);
        assertThat(live(a, "T-1")).isEmpty();

        ObjectNode again = FedHub.claim(a1, "proj/a1", "T-1", "src/x.py");
        assertThat(again.path("type").asText()).isEqualTo("claim_granted");
        assertThat(again.path("epoch").asLong()).isEqualTo(epoch);
        assertThat(again.path("payload").asText()).isEqualTo("Task 'T-1' already claimed by proj/a1.");
        assertThat(live(b, "T-1").orElseThrow().epoch()).isEqualTo(epoch); // not renewed

        HubClient a2 = a.agent("proj/a2");
        ObjectNode denied = FedHub.claim(a2, "proj/a2", "T-1", "src/x.py");
        assertThat(denied.path("type").asText()).isEqualTo("claim_denied");
        assertThat(denied.path("namespace").asText()).isEqualTo("proj");
        assertThat(denied.path("owner_hub_id").asText()).isEqualTo("hub-b");
        assertThat(denied.path("payload").asText()).isEqualTo("Task 'T-1' is already claimed by proj/a1.");
        assertThat(denied.has("ownership")).isFalse();
        assertThat(denied.has("reason_code")).isFalse();
        assertThat(live(b, "T-1").orElseThrow().owner()).isEqualTo("proj/a1");

        HubClient local = a.agent("aproj/l1");
        assertThat(FedHub.claim(local, "aproj/l1", "L-1", "src").path("type").asText()).isEqualTo("claim_granted");
        assertThat(live(a, "L-1")).isPresent(); // its own namespace is decided here
        assertThat(live(b, "L-1")).isEmpty();
        assertThat(a.federation.metrics().forwardedClaims.get()).isEqualTo(3);
        assertThat(a.federation.metrics().forwardedClaimsGranted.get()).isEqualTo(2);
        assertThat(Http.get(a, "/metrics")).contains("synapse_forwarded_claims_denied_total 1");
    }

    @Test
    void aKeyedRetryOfAForwardedClaimIsAnsweredFromTheOwnersLedgerAndNeverGrantsTwice() throws Exception {
        FedHub a = forwarder();
        HubClient a1 = a.agent("proj/a1");
        ObjectNode first = keyedClaim(a1, "T-9", "k-1", "src/a");
        assertThat(first.path("type").asText()).isEqualTo("claim_granted");
        long counter = b.durable.actor().read(s -> s.claims().epochCounter()).get();
        ObjectNode retry = keyedClaim(a1, "T-9", "k-1", "src/a");
        assertThat(retry.path("type").asText()).isEqualTo("claim_granted");
        assertThat(retry.path("epoch").asLong()).isEqualTo(first.path("epoch").asLong());
        assertThat(b.durable.actor().read(s -> s.claims().epochCounter()).get()).isEqualTo(counter);
        assertThat(b.server.services().metrics().idempotentReplays.get()).isEqualTo(1);
        ObjectNode conflict = keyedClaim(a1, "T-9", "k-1", "src/other");
        assertThat(conflict.path("type").asText()).isEqualTo("claim_denied");
        assertThat(conflict.path("payload").asText()).contains("idem_key was already used");
        assertThat(b.durable.actor().read(s -> s.claims().epochCounter()).get()).isEqualTo(counter);
    }

    @Test
    void anUnkeyedRetryOfAHeldForwardedClaimIsAnsweredAsItStandsAndNeitherJournaledNorBroadcast() throws Exception {
        FedHub a = forwarder();
        HubClient watcher = b.agent("proj/watcher"); // on the owner: sees the owner's claim traffic
        HubClient a1 = a.agent("proj/a1");
        ObjectNode first = FedHub.claim(a1, "proj/a1", "T-5", "src/r.py");
        assertThat(first.path("type").asText()).as(first.toString()).isEqualTo("claim_granted");
        watcher.await(f -> "claim_granted".equals(f.path("type").asText()) && "T-5".equals(f.path("task_id").asText()),
                WAIT);
        Claim held = live(b, "T-5").orElseThrow();
        long counter = b.durable.actor().read(s -> s.claims().epochCounter()).get();
        long seq = b.durable.actor().read(s -> s.lastSeq()).get();

        ObjectNode again = FedHub.claim(a1, "proj/a1", "T-5", "src/r.py");

        assertThat(again.path("type").asText()).isEqualTo("claim_granted");
        assertThat(again.path("epoch").asLong()).isEqualTo(first.path("epoch").asLong());
        assertThat(again.path("lease_expires_at").asDouble()).isEqualTo(first.path("lease_expires_at").asDouble());
        assertThat(again.path("payload").asText()).isEqualTo("Task 'T-5' already claimed by proj/a1.");
        assertThat(live(b, "T-5")).contains(held); // not renewed
        assertThat(b.durable.actor().read(s -> s.claims().epochCounter()).get()).isEqualTo(counter);
        assertThat(b.durable.actor().read(s -> s.lastSeq()).get()).as("nothing journaled").isEqualTo(seq);
        // a later grant reaches the watcher after anything the retry could have broadcast before it
        assertThat(FedHub.claim(a1, "proj/a1", "T-6", "src/s.py").path("type").asText()).isEqualTo("claim_granted");
        watcher.await(f -> "claim_granted".equals(f.path("type").asText()) && "T-6".equals(f.path("task_id").asText()),
                WAIT);
        assertThat(watcher.received().stream().filter(f -> "T-5".equals(f.path("task_id").asText())))
                .as("the retry is answered to the peer only").hasSize(1);
    }

    private static ObjectNode keyedClaim(HubClient c, String task, String key, String path) throws Exception {
        ObjectNode f = c.frame("proj/a1", "claim");
        f.put("task_id", task);
        f.put("idem_key", key);
        f.putArray("paths").add(path);
        c.send(f);
        return c.await(r -> task.equals(r.path("task_id").asText())
                && (r.path("type").asText().equals("claim_granted") || r.path("type").asText().equals("claim_denied")),
                WAIT);
    }

    @Test
    void theForwarderRefusesUngovernedNamespacesAndRemoteOnesWithoutARoute() throws Exception {
        FedHub a = forwarder();
        HubClient plain = a.agent("loner");
        ObjectNode ungoverned = FedHub.claim(plain, "loner", "U-1");
        assertThat(ungoverned.path("type").asText()).isEqualTo("claim_denied");
        assertThat(ungoverned.path("ownership").asText()).isEqualTo("ungoverned");
        assertThat(ungoverned.path("owner_hub_id").isNull()).isTrue();
        assertThat(ungoverned.path("namespace").asText()).isEmpty();
        assertThat(ungoverned.has("reason_code")).isFalse();
        HubClient other = a.agent("other/z");
        ObjectNode noRoute = FedHub.claim(other, "other/z", "O-1");
        assertThat(noRoute.path("ownership").asText()).isEqualTo("remote");
        assertThat(noRoute.path("owner_hub_id").asText()).isEqualTo("hub-c");
        assertThat(noRoute.path("payload").asText())
                .isEqualTo("claim refused: this hub does not own namespace 'other' (remote)");
        assertThat(live(a, "U-1")).isEmpty();
        assertThat(live(a, "O-1")).isEmpty();
        assertThat(a.federation.metrics().forwardedClaims.get()).isZero();
    }

    /** A peer socket to B registered as hub-a, with or without hub-a's client certificate. */
    private HubClient peerToB(boolean withCert) throws Exception {
        HubClient c = b.connect(withCert ? b.pinned().withClientCertificate(aCerts.clientFiles().cert(),
                aCerts.clientFiles().key()) : b.pinned());
        c.awaitType("welcome", WAIT);
        c.send(c.frame("hub-a", "heartbeat"));
        return c;
    }

    /** A well-formed forwarded claim of {@code task} for {@code claimant} in namespace proj (the caller may change it). */
    private static ObjectNode request(HubClient peer, String claimant, String task) {
        ObjectNode f = peer.frame("hub-a", "multihub_claim_request");
        f.put("namespace", "proj");
        f.put("claimant", claimant);
        f.put("task_id", task);
        ObjectNode inner = f.putObject("claim");
        inner.put("type", "claim");
        inner.put("sender", claimant);
        inner.put("task_id", task);
        return f;
    }

    private static ObjectNode forwardedTo(HubClient peer, String namespace, String claimant, String task)
            throws Exception {
        ObjectNode f = request(peer, claimant, task);
        f.put("namespace", namespace);
        peer.send(f);
        return peer.await(r -> "multihub_claim_result".equals(r.path("type").asText()) || "error".equals(
                r.path("type").asText()), WAIT);
    }

    @Test
    void theOwnerGrantsOnlyAnAuthorisedPeerInItsGrantedNamespaceThatResolvesLocal() throws Exception {
        try (HubClient noCert = peerToB(false)) {
            ObjectNode r = forwardedTo(noCert, "proj", "proj/a1", "X-1");
            assertThat(r.path("granted").asBoolean()).isFalse();
            assertThat(r.path("detail").asText()).isEqualTo("peer not authorised to forward claims");
            assertThat(r.path("owner_hub_id").asText()).isEqualTo("hub-b");
            assertThat(r.path("grant").isNull()).isTrue();
        }
        Await.offline(b, "hub-a");
        HubClient peer = peerToB(true);
        ObjectNode otherNs = forwardedTo(peer, "other", "other/z", "X-2");
        assertThat(otherNs.path("granted").asBoolean()).isFalse(); // not its grant's namespace
        ObjectNode mismatch = forwardedTo(peer, "proj", "zzz/q1", "X-3");
        assertThat(mismatch.path("granted").asBoolean()).isFalse();
        assertThat(mismatch.path("detail").asText()).isEqualTo("claimant 'zzz/q1' is not in namespace 'proj'");
        ObjectNode malformed = peer.frame("hub-a", "multihub_claim_request");
        malformed.put("namespace", "proj");
        peer.send(malformed);
        assertThat(peer.awaitType("error", WAIT).path("payload").asText()).isEqualTo("Malformed multi-hub claim request");
        assertThat(live(b, "X-1")).isEmpty();
        assertThat(live(b, "X-2")).isEmpty();
        assertThat(live(b, "X-3")).isEmpty();
        ObjectNode ok = forwardedTo(peer, "proj", "proj/a1", "X-4");
        assertThat(ok.path("granted").asBoolean()).as(ok.toString()).isTrue();
        assertThat(ok.path("grant").path("owner").asText()).isEqualTo("proj/a1");
        assertThat(live(b, "X-4")).isPresent();
    }

    @Test
    void aClaimWithAnInvalidPathIdentityGetsAVerdictAndTheNextRequestOnTheConnectionIsNotHeldUp() throws Exception {
        HubClient peer = peerToB(true);
        ObjectNode f = request(peer, "proj/a1", "PI-1");
        ((ObjectNode) f.get("claim")).put("path_identity", "not an identity");
        peer.send(f);
        ObjectNode refused = peer.await(r -> "multihub_claim_result".equals(r.path("type").asText())
                || "error".equals(r.path("type").asText()), WAIT);
        assertThat(refused.path("type").asText()).as(refused.toString()).isEqualTo("multihub_claim_result");
        assertThat(refused.path("granted").asBoolean()).isFalse();
        assertThat(refused.path("detail").asText()).isEqualTo("Task 'PI-1' carries an invalid path identity.");
        // before, no verdict came, and every later request on this connection waited behind the missing one
        ObjectNode next = forwardedTo(peer, "proj", "proj/a1", "PI-2");
        assertThat(next.path("granted").asBoolean()).as(next.toString()).isTrue();
        assertThat(live(b, "PI-1")).isEmpty();
    }

    @Test
    void aMalformedRequestIsAnsweredAfterTheVerdictOnTheRequestBeforeIt() throws Exception {
        HubClient peer = peerToB(true);
        java.util.List<String> answers = new java.util.concurrent.CopyOnWriteArrayList<>();
        for (int i = 0; i < 5; i++) {
            peer.send(request(peer, "proj/a1", "ORD-" + i));
            ObjectNode malformed = peer.frame("hub-a", "multihub_claim_request");
            malformed.put("namespace", "proj");
            peer.send(malformed);
        }
        for (int i = 0; i < 10; i++) { // in the order they arrived
            ObjectNode a = peer.await(r -> "multihub_claim_result".equals(r.path("type").asText())
                    || "error".equals(r.path("type").asText()), WAIT);
            answers.add("error".equals(a.path("type").asText()) ? "error" : "result " + a.path("task_id").asText());
        }
        assertThat(answers).containsExactly("result ORD-0", "error", "result ORD-1", "error", "result ORD-2", "error",
                "result ORD-3", "error", "result ORD-4", "error");
    }

    @Test
    void aKeyedRetryIsAnsweredFromTheLedgerBeforeAChangedGrantIsChecked() throws Exception {
        HubClient peer = peerToB(true);
        ObjectNode first = keyed(peer, "KEY-1", "key-1");
        assertThat(first.path("granted").asBoolean()).as(first.toString()).isTrue();

        // the policy now grants hub-a another namespace: a present-moment refusal for anything new
        Path trust = dir.resolve("b-trust");
        new dev.synapsehub.federation.trust.FederationStore(List.of(new dev.synapsehub.federation.trust.PeeringRecord(
                "a.example", List.of("proj", "other"), List.of(aCerts.client().pin().text()), List.of("k"), List.of(),
                null, false, new dev.synapsehub.federation.trust.Provenance("test", 1.0, "alice"))))
                .write(trust.resolve("federation.json"));
        TrustFiles.rewrite(trust.resolve("serving-policy.json"), "{\"version\":1,\"federation_store\":\"federation.json\","
                + "\"client_ca_file\":\"client-ca.pem\",\"grants\":[{\"sender\":\"hub-a\",\"domain_id\":\"a.example\","
                + "\"namespace\":\"other\",\"signing_key_id\":\"k\"}]}");
        ObjectNode fresh = keyed(peer, "KEY-2", "key-2");
        assertThat(fresh.path("granted").asBoolean()).isFalse();
        assertThat(fresh.path("detail").asText()).isEqualTo("peer not authorised to forward claims in namespace 'proj'");

        ObjectNode retry = keyed(peer, "KEY-1", "key-1"); // INV-CR-1: the first answer, not today's refusal
        assertThat(retry.path("granted").asBoolean()).as(retry.toString()).isTrue();
        assertThat(retry.path("grant").path("epoch").asLong()).isEqualTo(first.path("grant").path("epoch").asLong());
        assertThat(live(b, "KEY-2")).isEmpty();
    }

    private static ObjectNode keyed(HubClient peer, String task, String idemKey) throws Exception {
        ObjectNode f = request(peer, "proj/a1", task);
        ((ObjectNode) f.get("claim")).put("idem_key", idemKey);
        peer.send(f);
        return peer.await(r -> "multihub_claim_result".equals(r.path("type").asText())
                && task.equals(r.path("task_id").asText()), WAIT);
    }

    @Test
    void anUnkeyedRetryOnThePeersNextConnectionIsDecidedAfterTheClaimItsLastOneLeftUndecided() throws Exception {
        long counter = b.durable.actor().read(s -> s.claims().epochCounter()).get();
        java.util.concurrent.CountDownLatch stalled = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        // the owner's writer is busy: what the two requests read waits behind this
        b.durable.actor().read(s -> {
            stalled.countDown();
            try {
                release.await(30, java.util.concurrent.TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return null;
        });
        assertThat(stalled.await(15, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        try {
            HubClient first = peerToB(true);
            first.send(request(first, "proj/a1", "RC-1"));
            pulled(first); // the claim was read: its decision waits on the writer
            first.close(); // the forwarding hub's link timed out and reconnects
            Await.offline(b, "hub-a");
            HubClient second = peerToB(true);
            second.send(request(second, "proj/a1", "RC-1")); // the agent's unkeyed retry
            pulled(second);
            release.countDown();
            ObjectNode retry = second.await(r -> "multihub_claim_result".equals(r.path("type").asText()), WAIT);
            assertThat(retry.path("granted").asBoolean()).as(retry.toString()).isTrue();
            Claim held = live(b, "RC-1").orElseThrow();
            // one grant: the retry got the one its first request made, not a renewal under another epoch
            assertThat(retry.path("grant").path("epoch").asLong()).isEqualTo(held.epoch());
            assertThat(b.durable.actor().read(s -> s.claims().epochCounter()).get()).isEqualTo(counter + 1);
        } finally {
            release.countDown();
        }
    }

    /** Pulls the log on {@code peer} and waits for the page: the frames sent before it were read. */
    private static void pulled(HubClient peer) throws Exception {
        ObjectNode f = peer.frame("hub-a", "multihub_log_request");
        f.put("after_seq", 0);
        f.put("limit", 1);
        peer.send(f);
        peer.awaitType("multihub_log_snapshot", WAIT);
    }

    @Test
    void anUnkeyedRetryOnASecondConnectionWhileTheFirstIsInFlightGetsItsVerdictAndIsNotSentAgain() throws Exception {
        // a bound well past what the reconnect and retry take on a loaded machine: the retry must join the
        // first forward while it is still in flight
        FedHub a = forwarder(new ClaimRoute("hub-b", b.uri(), b.certs.server().pin()), Duration.ofSeconds(40));
        HubClient first = a.agent("proj/a1");
        assertThat(FedHub.claim(first, "proj/a1", "WARM", "src/w").path("type").asText()).isEqualTo("claim_granted");
        long counter = b.durable.actor().read(s -> s.claims().epochCounter()).get();
        long decided = b.federation.metrics().peerClaimsDecided.get();
        long forwarded = a.federation.metrics().forwardedClaims.get();
        java.util.concurrent.CountDownLatch stalled = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        b.durable.actor().read(s -> { // the owner is slow: the first forward stays in flight
            stalled.countDown();
            try {
                release.await(30, java.util.concurrent.TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return null;
        });
        assertThat(stalled.await(15, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        try {
            first.send(claimFrame(first, "J-1"));
            first.send(claimFrame(first, "J-1")); // sent twice on one connection
            dev.synapsehub.federation.testing.Await.until("both forwarded", WAIT,
                    () -> a.federation.metrics().forwardedClaims.get() == forwarded + 2);
            HubClient second = a.connect(a.pinned()); // the agent reconnects and retries, unkeyed
            second.awaitType("welcome", WAIT);
            ObjectNode takeover = second.frame("proj/a1", "heartbeat");
            takeover.put("takeover", true);
            second.send(takeover);
            second.send(claimFrame(second, "J-1"));
            dev.synapsehub.federation.testing.Await.until("the retry forwarded", WAIT,
                    () -> a.federation.metrics().forwardedClaims.get() == forwarded + 3);
            release.countDown();
            ObjectNode retry = second.await(r -> "J-1".equals(r.path("task_id").asText())
                    && ("claim_granted".equals(r.path("type").asText()) || "claim_denied".equals(r.path("type").asText())),
                    WAIT);
            assertThat(retry.path("type").asText()).as(retry.toString()).isEqualTo("claim_granted");
            Claim held = live(b, "J-1").orElseThrow();
            assertThat(retry.path("epoch").asLong()).isEqualTo(held.epoch());
            // the owner decided one request: the retries waited for its verdict instead of being sent again
            assertThat(b.federation.metrics().peerClaimsDecided.get()).isEqualTo(decided + 1);
            assertThat(b.durable.actor().read(s -> s.claims().epochCounter()).get()).isEqualTo(counter + 1);
            assertThat(Http.get(a, "/metrics")).contains("synapse_forwarded_claims_joined_total 2");
        } finally {
            release.countDown();
        }
    }

    private static ObjectNode claimFrame(HubClient c, String task) {
        ObjectNode f = c.frame("proj/a1", "claim");
        f.put("task_id", task);
        f.putArray("paths").add("src/j");
        return f;
    }

    @Test
    void aGrantIsOnlyEverTheVerdictOnItsOwnersRequest() {
        ObjectNode grantedToA1 = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode();
        grantedToA1.put("task_id", "T").put("granted", true).putObject("grant").put("owner", "proj/a1");
        ObjectNode denied = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode();
        denied.put("task_id", "T").put("granted", false).putNull("grant");
        assertThat(ClaimForwarder.answers(grantedToA1, "T", "proj/a1")).isTrue();
        assertThat(ClaimForwarder.answers(grantedToA1, "T", "proj/a2")).as("a grant made for another agent").isFalse();
        assertThat(ClaimForwarder.answers(grantedToA1, "U", "proj/a1")).isFalse();
        assertThat(ClaimForwarder.answers(denied, "T", "proj/a2")).isTrue();
        ObjectNode noOwner = grantedToA1.deepCopy();
        ((ObjectNode) noOwner.get("grant")).remove("owner");
        assertThat(ClaimForwarder.answers(noOwner, "T", "proj/a1")).as("a grant that names nobody").isFalse();
    }

    @Test
    void anOwnerWhoseHostAcceptsButNeverAnswersIsATimeoutByTheBoundNotAfterTheConnectTimeout() throws Exception {
        try (java.net.ServerSocket blackhole = new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
            // accepted by the kernel, never read: the TLS handshake waits for its connect timeout (10 s)
            FedHub a = forwarder(new ClaimRoute("hub-b", java.net.URI.create("wss://127.0.0.1:" + blackhole.getLocalPort()
                    + "/"), b.certs.server().pin()), Duration.ofSeconds(1));
            HubClient a1 = a.agent("proj/a1");
            long started = System.nanoTime();
            ObjectNode timeout = FedHub.claim(a1, "proj/a1", "BH-1");
            long tookMillis = Duration.ofNanos(System.nanoTime() - started).toMillis();
            assertThat(timeout.path("type").asText()).as(timeout.toString()).isEqualTo("claim_denied");
            assertThat(timeout.path("forward_error").asText()).isEqualTo("timeout");
            assertThat(tookMillis).as("answered by the 1 s bound, with room for a loaded host").isLessThan(6_000);
            assertThat(a.federation.metrics().forwardedClaimTimeouts.get()).isEqualTo(1);
        }
    }

    @Test
    void anOwnerWhoseHostNeverAnswersHoldsUpNoForwardToAHealthyOwner() throws Exception {
        try (java.net.ServerSocket blackhole = new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
            // hub-c (namespace other) accepts connections and never answers; hub-b (proj) is healthy
            ForwardSettings forward = new ForwardSettings(ForwardSettings.byHub(List.of(
                    new ClaimRoute("hub-b", b.uri(), b.certs.server().pin()),
                    new ClaimRoute("hub-c", java.net.URI.create("wss://127.0.0.1:" + blackhole.getLocalPort() + "/"),
                            b.certs.server().pin()))),
                    // a bound past what the agents' connections and the healthy grant take on a loaded machine
                    null, aCerts.clientFiles().cert(), aCerts.clientFiles().key(), Duration.ofSeconds(40));
            FedHub a = keep(new FedHub(aCerts, dir.resolve("a.db"), new FederationSettings(ServingTrust.none(),
                    WatchSettings.none(), new NamespaceOwners("hub-a", Map.of("proj", "hub-b", "other", "hub-c")),
                    forward)));
            List<HubClient> stuck = new ArrayList<>();
            for (int i = 0; i < 6; i++) { // more than the threads of any fixed pool the hub would size for this
                HubClient c = a.agent("other/d" + i);
                ObjectNode f = c.frame("other/d" + i, "claim");
                f.put("task_id", "D-" + i);
                c.send(f);
                stuck.add(c);
            }
            dev.synapsehub.federation.testing.Await.until("the dead owner's claims forwarded", WAIT,
                    () -> a.federation.metrics().forwardedClaims.get() == 6);
            HubClient healthy = a.agent("proj/a1");
            healthy.send(claimFrame(healthy, "H-1"));
            ObjectNode granted = healthy.await(r -> "H-1".equals(r.path("task_id").asText())
                    && ("claim_granted".equals(r.path("type").asText()) || "claim_denied".equals(r.path("type").asText())),
                    Duration.ofSeconds(30)); // shorter than the bound: a forward queued behind the dead owner's would miss it
            assertThat(granted.path("type").asText()).as(granted.toString()).isEqualTo("claim_granted");
            // answered while every forward to the dead owner was still waiting for it (each is refused at the bound)
            assertThat(a.federation.metrics().forwardedClaimsDenied.get()).isZero();
            for (int i = 0; i < stuck.size(); i++) {
                String task = "D-" + i;
                ObjectNode refused = stuck.get(i).await(r -> task.equals(r.path("task_id").asText())
                        && "claim_denied".equals(r.path("type").asText()), Duration.ofSeconds(60));
                // the bound's timeout, or the plain refusal when the connect's own 10 s ran out first
                assertThat(refused.path("ownership").asText()).as(refused.toString()).isEqualTo("remote");
            }
            assertThat(live(b, "H-1")).isPresent();
        }
    }

    @Test
    void anOwnerSlowerThanTheBoundIsATimeoutAndAWrongPinThePlainRefusal() throws Exception {
        FakePeer silent = keep(new FakePeer(pki.hub("hub-s"), r -> null));
        FedHub a = forwarder(new ClaimRoute("hub-b", silent.uri(), silent.certs.server().pin()), Duration.ofSeconds(1));
        HubClient a1 = a.agent("proj/a1");
        ObjectNode timeout = FedHub.claim(a1, "proj/a1", "T-1");
        assertThat(timeout.path("type").asText()).isEqualTo("claim_denied");
        assertThat(timeout.path("ownership").asText()).isEqualTo("remote");
        assertThat(timeout.path("forward_error").asText()).isEqualTo("timeout");
        assertThat(a.federation.metrics().forwardedClaimTimeouts.get()).isEqualTo(1);
        a.close();
        open.remove(a);

        FedHub wrongPin = forwarder(new ClaimRoute("hub-b", b.uri(), TestCertificates.selfSigned("x").pin()),
                ForwardSettings.BOUND);
        HubClient c = wrongPin.agent("proj/a1");
        ObjectNode refused = FedHub.claim(c, "proj/a1", "T-2");
        assertThat(refused.path("ownership").asText()).isEqualTo("remote");
        assertThat(refused.has("forward_error")).isFalse();
        assertThat(c.isOpen()).isTrue(); // the claimant's socket is never closed for it (F9.2)
        c.send(c.frame("proj/a1", "state_request"));
        c.awaitType("state_snapshot", WAIT);
        assertThat(live(b, "T-2")).isEmpty();
    }

    @Test
    void aClientKeyEditedIntoAnInvalidFileRefusesForwardingOnTheWarmLinkUntilItValidates() throws Exception {
        TestCertificates.PemPair client = aCerts.client().write(java.nio.file.Files.createDirectories(dir.resolve("a-live")),
                "client");
        FedHub a = forwarder(new ClaimRoute("hub-b", b.uri(), b.certs.server().pin()), ForwardSettings.BOUND, client);
        HubClient a1 = a.agent("proj/a1");
        assertThat(FedHub.claim(a1, "proj/a1", "K-1").path("type").asText()).isEqualTo("claim_granted"); // warm now

        long invalid = a.federation.clientIdentity().invalidEdits();
        java.nio.file.Files.setPosixFilePermissions(client.key(),
                java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
        dev.synapsehub.federation.testing.Await.until("the identity watcher finds the world-readable key", WAIT,
                () -> a.federation.clientIdentity().invalidEdits() > invalid);
        ObjectNode refused = FedHub.claim(a1, "proj/a1", "K-2");
        assertThat(refused.path("type").asText()).as(refused.toString()).isEqualTo("claim_denied");
        assertThat(refused.path("ownership").asText()).isEqualTo("remote");
        assertThat(refused.has("forward_error")).isFalse(); // the plain refusal of a transport failure
        assertThat(Http.get(a, "/metrics"))
                .contains("synapse_forwarded_claim_outcomes_total{owner=\"hub-b\",outcome=\"transport_failure\"} 1")
                .contains("synapse_federation_client_identity_invalid_total 1");
        assertThat(live(b, "K-2")).isEmpty();

        long loaded = a.federation.clientIdentity().loadedEdits();
        java.nio.file.Files.setPosixFilePermissions(client.key(),
                java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        dev.synapsehub.federation.testing.Await.until("the identity watcher finds the fixed key", WAIT,
                () -> a.federation.clientIdentity().loadedEdits() > loaded);
        assertThat(FedHub.claim(a1, "proj/a1", "K-2").path("type").asText()).isEqualTo("claim_granted");
        assertThat(live(b, "K-2")).isPresent();
    }

    @Test
    void twoDefaultHubsGiveNoCrossHostExclusion() throws Exception {
        // INV-MH-4: without an ownership map each hub grants from its own lease table
        FedHub one = keep(FedHub.serving(pki.hub("hub-x"), dir.resolve("x.db"), ServingTrust.none()));
        FedHub two = keep(FedHub.serving(pki.hub("hub-y"), dir.resolve("y.db"), ServingTrust.none()));
        ObjectNode g1 = FedHub.claim(one.agent("proj/p1"), "proj/p1", "SAME", "src/file.py");
        ObjectNode g2 = FedHub.claim(two.agent("proj/p2"), "proj/p2", "SAME", "src/file.py");
        assertThat(g1.path("type").asText()).isEqualTo("claim_granted");
        assertThat(g2.path("type").asText()).isEqualTo("claim_granted");
        assertThat(live(one, "SAME").orElseThrow().owner()).isEqualTo("proj/p1");
        assertThat(live(two, "SAME").orElseThrow().owner()).isEqualTo("proj/p2");
    }

    /** Small waits on hub state. */
    static final class Await {
        static void offline(FedHub hub, String name) throws InterruptedException {
            dev.synapsehub.federation.testing.Await.until(name + " offline", WAIT,
                    () -> !hub.server.services().registry().isOnline(name));
        }
    }
}
