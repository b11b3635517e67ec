package dev.synapsehub.federation.serve;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.client.tls.TestCertificates;
import dev.synapsehub.federation.testing.Await;
import dev.synapsehub.federation.testing.FedHub;
import dev.synapsehub.federation.testing.Pki;
import dev.synapsehub.federation.testing.TrustFiles;
import dev.synapsehub.federation.trust.FederationStore;
import dev.synapsehub.federation.trust.PeeringRecord;
import dev.synapsehub.federation.trust.ServingTrust;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code multihub_log_request} → {@code multihub_log_snapshot} (contract §11.1) from a real
 * journaled hub over TLS: authorised peers get contiguous pages from the journal; every refusal
 * of F5 looks like "no new events" on the wire, is counted, and names its reason in the log.
 */
class LogServingTest {
    @TempDir
    Path dir;
    Pki pki;
    Pki.HubCerts a;
    FedHub b;
    Path policy;
    PeeringRecord peering;
    final List<AutoCloseable> open = new ArrayList<>();

    @BeforeEach
    void ownerWithPolicy() throws Exception {
        pki = new Pki(dir);
        a = pki.hub("hub-a");
        peering = TrustFiles.peering("a.example", "proj", "proj:hub-a:2026", List.of(a.client().pin().text()));
        policy = TrustFiles.servingPolicy(dir.resolve("hub-b-trust"), pki.clientCaFile(), List.of(peering),
                List.of(new TrustFiles.Grant("hub-a", "a.example", "proj", "proj:hub-a:2026")));
        b = FedHub.serving(pki.hub("hub-b"), dir.resolve("b.db"), ServingTrust.load(policy, m -> { }));
        open.add(b);
        HubClient agent = b.agent("proj/b1");
        for (int i = 1; i <= 3; i++) {
            assertThat(FedHub.claim(agent, "proj/b1", "T-" + i, "src/" + i).path("type").asText())
                    .isEqualTo("claim_granted");
        }
    }

    @AfterEach
    void close() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    /** A peer socket registered as {@code name}, presenting hub-a's client certificate when {@code withCert}. */
    private HubClient peer(String name, boolean withCert) throws Exception {
        HubClient c = b.connect(withCert ? b.pinned().withClientCertificate(a.clientFiles().cert(),
                a.clientFiles().key()) : b.pinned());
        c.awaitType("welcome", FedHub.WAIT);
        ObjectNode hb = c.frame(name, "heartbeat");
        c.send(hb);
        return c;
    }

    private void awaitOffline(String name) throws InterruptedException {
        long deadline = System.nanoTime() + FedHub.WAIT.toNanos();
        while (b.server.services().registry().isOnline(name)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(name + " still online");
            }
            Thread.sleep(2);
        }
    }

    private static ObjectNode pull(HubClient c, String name, Object afterSeq, Object limit) throws Exception {
        ObjectNode f = c.frame(name, "multihub_log_request");
        if (afterSeq instanceof Long l) {
            f.put("after_seq", l);
        } else if (afterSeq != null) {
            f.put("after_seq", afterSeq.toString());
        }
        if (limit instanceof Integer i) {
            f.put("limit", i);
        } else {
            f.putNull("limit");
        }
        c.send(f);
        return c.awaitType("multihub_log_snapshot", FedHub.WAIT);
    }

    private static ObjectNode requestAfter(HubClient c, long afterSeq) {
        ObjectNode f = c.frame("hub-a", "multihub_log_request");
        f.put("after_seq", afterSeq);
        f.put("limit", 1);
        return f;
    }

    private static void assertRefused(ObjectNode snapshot, long cursor) {
        assertThat(snapshot.path("events").size()).isZero();
        assertThat(snapshot.path("next_cursor").asLong()).isEqualTo(cursor);
        assertThat(snapshot.path("log_end_seq").isNull()).isTrue();
    }

    @Test
    void aPeerBehindRowsRetentionDeletedGetsAnErrorNamingTheGapAndPeersHoldTheRowsTheyStillNeed() throws Exception {
        HubClient p = peer("hub-a", true);
        assertThat(pull(p, "hub-a", 0L, 1).path("events").size()).isEqualTo(1);
        assertThat(b.federation.peerCursorFloor()).as("hub-a holds what it has not pulled").isZero();
        assertThat(pull(p, "hub-a", 1L, 1).path("events").size()).isEqualTo(1);
        assertThat(b.federation.peerCursorFloor()).isEqualTo(1);

        dev.synapsehub.federation.testing.Compaction.through(dir.resolve("b.db"), 2);
        ObjectNode refused = pullAnswer(p, 0L);
        assertThat(refused.path("type").asText()).as(refused.toString()).isEqualTo("error");
        assertThat(refused.path("payload").asText()).isEqualTo(
                "Log compacted: rows after seq 0 through seq 2 were deleted by retention and cannot be served");
        assertThat(b.federation.metrics().logRequestsCompacted.get()).isEqualTo(1);
        assertThat(b.federation.peerCursorFloor()).as("a pull behind deleted rows holds nothing (it would pin retention)")
                .isEqualTo(1);
        assertThat(dev.synapsehub.federation.testing.Http.get(b, "/metrics"))
                .contains("synapse_multihub_log_requests_compacted_total 1");
        assertThat(pull(p, "hub-a", 2L, 1).path("events").get(0).path("seq").asLong()).as("the rows kept are served")
                .isEqualTo(3);
        assertThat(b.federation.peerCursorFloor()).isEqualTo(2);

        dev.synapsehub.federation.testing.Compaction.through(dir.resolve("b.db"), 3); // every row: the page is empty, though the log goes on past the cursor
        assertThat(pullAnswer(p, 2L).path("payload").asText()).isEqualTo(
                "Log compacted: rows after seq 2 through seq 3 were deleted by retention and cannot be served");
        assertThat(pull(p, "hub-a", 3L, 1).path("events").size()).as("a peer at the end is answered as ever").isZero();
    }

    /**
     * The page of a pull is answered on the log reader's path, through the outbox thread (held
     * here): an error the edge answers at once for the peer's next frame waits for it, so the
     * peer reads its answers in the order of its requests (§4.3).
     */
    @Test
    void anEdgeErrorForAPeersNextFrameFollowsThePageOfItsPull() throws Exception {
        HubClient p = peer("hub-a", true);
        assertThat(pull(p, "hub-a", 0L, 1).path("events").size()).isEqualTo(1);
        int before = p.received().size();
        java.util.concurrent.CountDownLatch release = holdOutbox();
        try {
            p.send(requestAfter(p, 1L)); // its page waits for the outbox thread
            p.sendText("{not json"); // answered by the edge, on the connection's loop
            ObjectNode heartbeat = p.frame("hub-a", "heartbeat"); // read after it, on the same loop
            heartbeat.putArray("roles").add("marker");
            p.send(heartbeat);
            long end = System.nanoTime() + FedHub.WAIT.toNanos();
            while (!b.server.services().registry().rolesOf("hub-a").contains("marker")) {
                assertThat(System.nanoTime()).as("the hub never read the heartbeat").isLessThan(end);
                Thread.sleep(1);
            }
        } finally {
            release.countDown();
        }
        p.awaitType("error", FedHub.WAIT);
        p.awaitType("multihub_log_snapshot", FedHub.WAIT);
        assertThat(p.received().subList(before, p.received().size()).stream().map(f -> f.path("type").asText())
                .filter(t -> "error".equals(t) || "multihub_log_snapshot".equals(t)).toList())
                .containsExactly("multihub_log_snapshot", "error");
    }

    /** Holds the hub's outbox thread until the returned latch is counted down. */
    private java.util.concurrent.CountDownLatch holdOutbox() throws InterruptedException {
        java.util.concurrent.CountDownLatch held = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        b.server.services().outbox().executor().execute(() -> {
            held.countDown();
            try {
                release.await(10, java.util.concurrent.TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        assertThat(held.await(FedHub.WAIT.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)).isTrue();
        return release;
    }

    @Test
    void aRestartedHubHoldsEveryRowUntilEachGrantedPeerHasPulledAgain() throws Exception {
        HubClient p = peer("hub-a", true);
        assertThat(pull(p, "hub-a", 0L, 1).path("events").size()).isEqualTo(1); // hub-a lags: it has seq 1 only
        b.close();
        open.remove(b);
        b = FedHub.serving(b.certs, dir.resolve("b.db"), ServingTrust.load(policy, m -> { }));
        open.add(b);
        // the cursors were in memory: compacting now would delete what hub-a has yet to pull, for good
        assertThat(b.federation.peerCursorFloor()).as("every row held until hub-a pulls again").isZero();

        HubClient again = peer("hub-a", true);
        assertThat(pull(again, "hub-a", 2L, 1).path("events").size()).isEqualTo(1);
        assertThat(b.federation.peerCursorFloor()).as("every granted peer pulled: its cursor holds").isEqualTo(2);
    }

    private static ObjectNode pullAnswer(HubClient p, long afterSeq) throws Exception {
        p.send(requestAfter(p, afterSeq));
        return p.await(f -> "error".equals(f.path("type").asText())
                || "multihub_log_snapshot".equals(f.path("type").asText()), FedHub.WAIT);
    }

    @Test
    void anAuthorisedPeerGetsTheJournalInContiguousPages() throws Exception {
        HubClient p = peer("hub-a", true);
        ObjectNode all = pull(p, "hub-a", 0L, null);
        long end = b.durable.journal().lastSeq();
        assertThat(all.path("log_end_seq").asLong()).isEqualTo(end);
        JsonNode events = all.path("events");
        assertThat(events.size()).isEqualTo((int) end);
        for (int i = 0; i < events.size(); i++) {
            assertThat(events.get(i).path("seq").asLong()).isEqualTo(i + 1);
            assertThat(events.get(i).path("payload").isObject()).isTrue();
        }
        assertThat(events.findValuesAsText("kind")).contains("claim");
        assertThat(all.path("next_cursor").asLong()).isEqualTo(end);
        assertThat(all.path("target").asText()).isEqualTo("hub-a");

        ObjectNode page = pull(p, "hub-a", 1L, 2);
        assertThat(page.path("events").size()).isEqualTo(2);
        assertThat(page.path("events").get(0).path("seq").asLong()).isEqualTo(2);
        assertThat(page.path("next_cursor").asLong()).isEqualTo(3);

        ObjectNode caughtUp = pull(p, "hub-a", end, null);
        assertThat(caughtUp.path("events").size()).isZero();
        assertThat(caughtUp.path("next_cursor").asLong()).isEqualTo(end);
        assertThat(caughtUp.path("log_end_seq").asLong()).isEqualTo(end);
        assertThat(b.federation.metrics().federationDenied.get()).isZero();
    }

    @Test
    void aMalformedRequestFromAnAuthorisedPeerGetsAnEmptySnapshotAtCursorZero() throws Exception {
        HubClient p = peer("hub-a", true);
        assertRefused(pull(p, "hub-a", -1L, null), 0);
        assertRefused(pull(p, "hub-a", "3", null), 0);
    }

    @Test
    void everyRefusalLooksLikeNoNewEventsAndIsCounted() throws Exception {
        try (HubClient noCert = peer("hub-a", false)) {
            assertRefused(pull(noCert, "hub-a", 0L, null), 0); // missing_certificate
        }
        assertRefused(pull(peer("hub-z", true), "hub-z", 2L, null), 2); // unknown_peer
        awaitOffline("hub-a");
        TestCertificates.PemPair stranger = pki.clientCa().issue("hub-a").write(dir, "stranger");
        HubClient s = b.connect(b.pinned().withClientCertificate(stranger.cert(), stranger.key()));
        s.awaitType("welcome", FedHub.WAIT);
        s.send(s.frame("hub-a", "heartbeat"));
        assertRefused(pull(s, "hub-a", 1L, null), 1); // certificate_pin_not_accepted: same CA, other pin
        assertThat(b.federation.metrics().federationDenied.get()).isEqualTo(3);
        String metrics = dev.synapsehub.federation.testing.Http.get(b, "/metrics");
        assertThat(metrics).contains("synapse_federation_denied_total 3");
    }

    @Test
    void withoutAServingPolicyEveryPeerIsRefused() throws Exception {
        FedHub bare = FedHub.serving(pki.hub("hub-c"), dir.resolve("c.db"), ServingTrust.none());
        open.add(bare);
        HubClient c = bare.connect(bare.pinned());
        c.awaitType("welcome", FedHub.WAIT);
        c.send(c.frame("hub-a", "heartbeat"));
        assertRefused(pull(c, "hub-a", 0L, null), 0);
        assertThat(bare.federation.metrics().federationDenied.get()).isEqualTo(1);
    }

    @Test
    void trustReloadsWithoutARestartAndAnInvalidFileNeverFallsBackToTheOldAllow() throws Exception {
        HubClient p = peer("hub-a", true);
        assertThat(pull(p, "hub-a", 0L, 1).path("events").size()).isEqualTo(1);

        Path store = dir.resolve("hub-b-trust/federation.json");
        new FederationStore(List.of(peering.revokedCopy())).write(store);
        assertRefused(pull(p, "hub-a", 0L, 1), 0); // revoked_peering, read from the changed store

        new FederationStore(List.of(peering)).write(store);
        assertThat(pull(p, "hub-a", 0L, 1).path("events").size()).isEqualTo(1);

        String good = java.nio.file.Files.readString(policy);
        TrustFiles.rewrite(policy, "{\"version\": 1, \"grants\": [");
        assertRefused(pull(p, "hub-a", 0L, 1), 0); // policy_invalid: denied, not the cached allow
        TrustFiles.rewrite(policy, good + " ");
        assertThat(pull(p, "hub-a", 0L, 1).path("events").size()).isEqualTo(1);

        // a chmod alone (same size and content) makes the policy invalid: owner-only files are part of its rules
        java.nio.file.Files.setPosixFilePermissions(policy, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
        assertRefused(pull(p, "hub-a", 0L, 1), 0);
        java.nio.file.Files.setPosixFilePermissions(policy, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        assertThat(pull(p, "hub-a", 0L, 1).path("events").size()).isEqualTo(1);
    }

    @Test
    void aRotatedClientCaTakesEffectWithoutARestartAndTheOldCaLosesItsTrustOnOpenSockets() throws Exception {
        HubClient old = peer("hub-a", true);
        assertThat(pull(old, "hub-a", 0L, 1).path("events").size()).isEqualTo(1);

        TestCertificates.Authority rotated = TestCertificates.authority("fed-client-ca-rotated");
        TestCertificates.Identity renewed = rotated.issue("hub-a");
        TestCertificates.PemPair renewedFiles = renewed.write(dir, "hub-a-renewed");
        new FederationStore(List.of(TrustFiles.peering("a.example", "proj", "proj:hub-a:2026",
                List.of(a.client().pin().text(), renewed.pin().text())))).write(dir.resolve("hub-b-trust/federation.json"));
        TrustFiles.rewrite(dir.resolve("hub-b-trust/client-ca.pem"),
                java.nio.file.Files.readString(rotated.writeCertificate(dir, "rotated-ca")));

        long denied = b.federation.metrics().federationDenied.get();
        assertRefused(pull(old, "hub-a", 0L, 1), 0); // certificate_not_trusted: its CA was rotated out
        assertThat(b.federation.metrics().federationDenied.get()).isEqualTo(denied + 1);
        old.close();
        awaitOffline("hub-a");

        HubClient fresh = b.connect(b.pinned().withClientCertificate(renewedFiles.cert(), renewedFiles.key()));
        fresh.awaitType("welcome", FedHub.WAIT);
        fresh.send(fresh.frame("hub-a", "heartbeat"));
        assertThat(pull(fresh, "hub-a", 0L, 1).path("events").size()).isEqualTo(1);
        assertThat(b.server.services().registry().session("hub-a").peerCertificate().getIssuerX500Principal().getName())
                .contains("fed-client-ca-rotated");
    }

    @Test
    void aPullIsReadOffTheWriterAndAnsweredWhileTheWriterIsHeld() throws Exception {
        HubClient p = peer("hub-a", true);
        long end = b.durable.journal().lastSeq();
        assertThat(pull(p, "hub-a", 0L, null).path("events").size()).isEqualTo((int) end);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch held = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CompletableFuture<Object> writer = b.durable.actor().read(state -> {
            held.countDown();
            try {
                release.await(); // the writer is busy until the pull was answered
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return null;
        });
        try {
            assertThat(held.await(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            ObjectNode page = pull(p, "hub-a", 1L, 2);
            assertThat(page.path("events").findValuesAsText("seq")).containsExactly("2", "3");
            assertThat(page.path("log_end_seq").asLong()).isEqualTo(end);
            assertThat(writer).isNotDone();
        } finally {
            release.countDown();
        }
        writer.get(10, java.util.concurrent.TimeUnit.SECONDS);
    }

    /**
     * The page after one just served is read before its pull comes; that pull is answered with it,
     * exactly as the journal holds it, with the log end as it is when the page goes out. A page
     * that reached the log's end when it was read is not kept: its pull reads again. (The reader is
     * one thread taking pulls in order, so once a pull is answered every earlier read ahead is done.)
     */
    @Test
    void thePageAfterOneServedIsReadAheadAndItsPullIsAnsweredWithItAsTheJournalHoldsIt() throws Exception {
        HubClient agent = b.agent("proj/b2");
        for (int i = 4; i <= 6; i++) {
            assertThat(FedHub.claim(agent, "proj/b2", "T-" + i, "src/" + i).path("type").asText()).isEqualTo("claim_granted");
        }
        HubClient p = peer("hub-a", true);
        dev.synapsehub.federation.FederationMetrics m = b.federation.metrics();
        long end = b.durable.journal().lastSeq();
        assertThat(end).isGreaterThanOrEqualTo(6);
        assertThat(pull(p, "hub-a", 0L, 1).path("events").findValuesAsText("seq")).containsExactly("1");
        ObjectNode second = pull(p, "hub-a", 1L, 1); // read while the first was on its way
        assertThat(m.logPagesServedAhead.get()).isEqualTo(1);
        assertThat(second.path("events").findValuesAsText("seq")).containsExactly("2");
        assertThat(second.path("events").get(0).path("payload"))
                .isEqualTo(new com.fasterxml.jackson.databind.ObjectMapper().readTree(
                        b.durable.journal().readStored(1, 1, LogServer.MAX_BYTES).get(0).payload()));
        assertThat(second.path("log_end_seq").asLong()).isEqualTo(end);

        // the third page is read ahead once this is answered; then the journal grows: it goes out with the new end
        assertThat(pull(p, "hub-a", 0L, 1).path("events").findValuesAsText("seq")).containsExactly("1");
        assertThat(FedHub.claim(agent, "proj/b2", "T-9", "src/9").path("type").asText()).isEqualTo("claim_granted");
        long grown = b.durable.journal().lastSeq();
        assertThat(grown).isGreaterThan(end);
        ObjectNode third = pull(p, "hub-a", 2L, 1);
        assertThat(m.logPagesServedAhead.get()).isEqualTo(2);
        assertThat(third.path("events").findValuesAsText("seq")).containsExactly("3");
        assertThat(third.path("log_end_seq").asLong()).isEqualTo(grown);

        // a pull of another size is read as asked, not from the page read for one event
        ObjectNode wider = pull(p, "hub-a", 1L, 2);
        assertThat(wider.path("events").findValuesAsText("seq")).containsExactly("2", "3");
        assertThat(m.logPagesServedAhead.get()).isEqualTo(2);

        // the page after grown - 1 is the log's last event: not kept, so its pull is read again
        assertThat(pull(p, "hub-a", grown - 2, 1).path("events").findValuesAsText("seq"))
                .containsExactly(Long.toString(grown - 1));
        assertThat(pull(p, "hub-a", grown, 1).path("events").size()).isZero();
        long servedAhead = m.logPagesServedAhead.get();
        assertThat(pull(p, "hub-a", grown - 1, 1).path("events").findValuesAsText("seq"))
                .containsExactly(Long.toString(grown));
        assertThat(m.logPagesServedAhead.get()).isEqualTo(servedAhead);
        assertThat(m.logReadAheadFailures.get()).isZero();
    }

    @Test
    void pullsBeyondTheReadersQueueAreAnsweredEmptyAndCountedAndTheWaitingOneIsServedOnceRead() throws Exception {
        HubClient p = peer("hub-a", true);
        long end = b.durable.journal().lastSeq();
        dev.synapsehub.federation.FederationMetrics metrics = new dev.synapsehub.federation.FederationMetrics();
        // a second server over the same hub and journal, whose reader takes one waiting pull
        try (LogServer server = new LogServer(b.server.services(), ServingTrust.load(policy, m -> { }),
                b.durable.journal(), metrics, 1)) {
            java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
            java.util.concurrent.CountDownLatch held = new java.util.concurrent.CountDownLatch(1);
            server.onReaderThread(() -> {
                held.countDown();
                try {
                    release.await(); // the reader is busy until the refusals were seen
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            assertThat(held.await(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            // peer() sends the heartbeat that binds the name but does not wait for it
            Await.until("hub-a bound", FedHub.WAIT, () -> b.server.services().registry().session("hub-a") != null);
            dev.synapsehub.net.session.Session session = b.server.services().registry().session("hub-a");
            java.util.function.LongFunction<dev.synapsehub.net.protocol.Request> pull = after -> {
                ObjectNode f = p.frame("hub-a", "multihub_log_request");
                f.put("after_seq", after);
                f.put("limit", 1);
                return new dev.synapsehub.net.protocol.Request(session, "hub-a", "multihub_log_request", "all", f);
            };
            try {
                server.handle(pull.apply(0)); // waits for the reader
                server.handle(pull.apply(1)); // the queue is full: answered at once
                server.handle(pull.apply(2));
                assertRefused(p.awaitType("multihub_log_snapshot", FedHub.WAIT), 1);
                assertRefused(p.awaitType("multihub_log_snapshot", FedHub.WAIT), 2);
                assertThat(metrics.logRequestsBusy.get()).isEqualTo(2);
                assertThat(metrics.logRequestsServed.get()).isZero();
            } finally {
                release.countDown();
            }
            ObjectNode served = p.awaitType("multihub_log_snapshot", FedHub.WAIT);
            assertThat(served.path("events").findValuesAsText("seq")).containsExactly("1");
            assertThat(served.path("log_end_seq").asLong()).isEqualTo(end);
            assertThat(metrics.logRequestsServed.get()).isEqualTo(1);
            assertThat(metrics.logRequestsBusy.get()).isEqualTo(2);
        }
    }

    @Test
    void aPolicyNamingAnotherCaFileRefusesEveryPeerUntilItNamesTheStartUpFileAgain() throws Exception {
        HubClient p = peer("hub-a", true);
        assertThat(pull(p, "hub-a", 0L, 1).path("events").size()).isEqualTo(1);
        String good = java.nio.file.Files.readString(policy);
        TestCertificates.writePrivate(dir.resolve("hub-b-trust/other-ca.pem"),
                java.nio.file.Files.readString(dir.resolve("hub-b-trust/client-ca.pem")));
        TrustFiles.rewrite(policy, good.replace("client-ca.pem", "other-ca.pem"));
        assertRefused(pull(p, "hub-a", 0L, 1), 0); // client_ca_changed: the TLS layer reads the start-up file
        TrustFiles.rewrite(policy, good + " ");
        assertThat(pull(p, "hub-a", 0L, 1).path("events").size()).isEqualTo(1);

        // a chmod alone (same size and content) makes the policy invalid: owner-only files are part of its rules
        java.nio.file.Files.setPosixFilePermissions(policy, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
        assertRefused(pull(p, "hub-a", 0L, 1), 0);
        java.nio.file.Files.setPosixFilePermissions(policy, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        assertThat(pull(p, "hub-a", 0L, 1).path("events").size()).isEqualTo(1);
    }

    /** A server that reads no journal of its own has no reader thread to run a test's task on: it says so. */
    @Test
    void aServerWithoutAReaderRefusesATaskForItsReaderThreadClearly() {
        try (LogServer server = new LogServer(null, ServingTrust.none(), null,
                new dev.synapsehub.federation.FederationMetrics())) {
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> server.onReaderThread(() -> { }))
                    .isInstanceOf(IllegalStateException.class).hasMessageStartingWith("no reader thread");
        }
    }
}
