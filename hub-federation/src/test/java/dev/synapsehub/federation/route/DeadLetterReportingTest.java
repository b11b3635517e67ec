package dev.synapsehub.federation.route;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.client.tls.TestCertificates;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.synapsehub.core.event.AuditRecordEvent;
import dev.synapsehub.core.event.DeadLetterEscalationEvent;
import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.core.messaging.MessagingLimits;
import dev.synapsehub.core.board.BoardLimits;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.core.claim.RegistryLimits;
import dev.synapsehub.core.resource.ResourceLimits;
import dev.synapsehub.federation.FederationSettings;
import dev.synapsehub.federation.follow.WatchSettings;
import dev.synapsehub.federation.testing.Await;
import dev.synapsehub.federation.testing.Closer;
import dev.synapsehub.federation.testing.FakePeer;
import dev.synapsehub.federation.testing.FedHub;
import dev.synapsehub.federation.testing.Pki;
import dev.synapsehub.federation.testing.TrustFiles;
import dev.synapsehub.federation.trust.ServingTrust;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.LoggerFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sending side of {@code dead_letter_forwarding} (contract §11.5, F5, F6) between real hubs
 * over mutual TLS with certificates made here: hub A escalates every 2nd dead letter to a
 * recipient; when the recipient's namespace is owned by hub B, A reports the escalation to B over
 * its {@code --relay-peer} route, and B broadcasts and journals it. Local, ungoverned and
 * mixed-owner targets are never reported; an owner that refuses silently gets the report once; an
 * owner that answers an error is not retried; an unreachable owner is retried, then given up.
 */
class DeadLetterReportingTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    static final Duration WAIT = Duration.ofSeconds(20);
    @TempDir
    Path dir;
    Pki pki;
    Pki.HubCerts aCerts;
    Pki.HubCerts bCerts;
    final Closer open = new Closer();

    @BeforeEach
    void certificates() throws Exception {
        pki = new Pki(dir);
        aCerts = pki.hub("hub-a");
        bCerts = pki.hub("hub-b");
    }

    @AfterEach
    void close() throws Exception {
        open.close();
    }

    private <T extends AutoCloseable> T keep(T c) {
        return open.keep(c);
    }

    /** Owner B of {@code proj}; its serving policy grants hub-a when {@code grantA}. */
    private FedHub owner(boolean grantA, int port) throws Exception {
        ServingTrust trust = ServingTrust.none();
        if (grantA) {
            Path policy = TrustFiles.servingPolicy(dir.resolve("b-trust"), pki.clientCaFile(),
                    List.of(TrustFiles.peering("a.example", "proj", "k", List.of(aCerts.client().pin().text()))),
                    List.of(new TrustFiles.Grant("hub-a", "a.example", "proj", "k")));
            trust = ServingTrust.load(policy, m -> { });
        }
        return keep(new FedHub(bCerts, dir.resolve("b-" + grantA + ".db"), new FederationSettings(trust,
                WatchSettings.none(), new NamespaceOwners("hub-b", Map.of("proj", "hub-b")), ForwardSettings.none()),
                b -> b.port(port)));
    }

    /** Hub A: owns aproj, proj belongs to hub-b (relay route to {@code uri}), other to hub-c (no route); escalates every 2nd. */
    private FedHub reporter(URI uri, dev.synapsehub.client.tls.CertificatePin pin) throws Exception {
        ForwardSettings relays = new ForwardSettings(ForwardSettings.byHub(List.of(new ClaimRoute("hub-b", uri, pin))),
                null, aCerts.clientFiles().cert(), aCerts.clientFiles().key(), Duration.ofSeconds(2));
        return keep(new FedHub(aCerts, dir.resolve("a.db"), new FederationSettings(ServingTrust.none(),
                WatchSettings.none(), new NamespaceOwners("hub-a", Map.of("proj", "hub-b", "aproj", "hub-a",
                "other", "hub-c")), ForwardSettings.none(), null, FederationSettings.RelayPolicy.DEFAULT, relays),
                b -> b, () -> new CoordinationState(RegistryLimits.DEFAULTS, CoordinationState.DEFAULT_IDEMPOTENCY_CAPACITY,
                BoardLimits.DEFAULTS, ResourceLimits.DEFAULTS, MessagingLimits.DEFAULTS.withEscalationThreshold(2))));
    }

    /** Two directed chats nobody receives: the second escalates; returns the escalation A broadcast. */
    private static ObjectNode escalate(HubClient sender, String target) throws Exception {
        for (int i = 0; i < 2; i++) {
            ObjectNode chat = sender.frame("aproj/sender", "chat");
            chat.put("target", target).put("payload", "are you there? " + i);
            sender.send(chat);
        }
        return sender.await(f -> "dead_letter_escalation".equals(f.path("type").asText())
                && target.strip().equals(f.path("escalation_target").asText()), WAIT);
    }

    private static List<JsonNode> journaled(FedHub hub) throws Exception {
        List<JournaledEvent> rows = hub.durable.actor().read(s -> {
            try {
                return hub.durable.journal().readAfter(0, 1000, Set.of(DeadLetterForwardingServer.TYPE));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }).get();
        List<JsonNode> out = new ArrayList<>();
        for (JournaledEvent e : rows) {
            out.add(JSON.readTree(((AuditRecordEvent) e.event()).payloadJson()));
        }
        return out;
    }

    private static boolean isForwarding(JsonNode f) {
        return DeadLetterForwardingServer.TYPE.equals(f.path("type").asText());
    }

    private static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    @Test
    void anEscalationForARecipientAnotherHubOwnsReachesTheOwnerAndIsJournaledOnBoth() throws Exception {
        FedHub b = owner(true, 0);
        HubClient watcher = b.agent("proj/b1");
        FedHub a = reporter(b.uri(), bCerts.server().pin());
        HubClient sender = a.agent("aproj/sender");
        DeadLetterForwarder forwarder = a.federation.deadLetterForwarder();

        // never reported: a local recipient, an ungoverned one, one whose owner has no route, a mixed list
        escalate(sender, "aproj/ghost");
        escalate(sender, "ghost");
        escalate(sender, "other/ghost");
        escalate(sender, "proj/ghost,aproj/ghost");
        // a single escalation of one chat is none: every 2nd dead letter escalates
        ObjectNode once = sender.frame("aproj/sender", "chat");
        sender.send(once.put("target", "proj/once").put("payload", "x"));

        ObjectNode escalation = escalate(sender, " proj/ghost ");
        assertThat(escalation.path("escalation_count").asLong()).isEqualTo(2);
        JsonNode seen = watcher.await(DeadLetterReportingTest::isForwarding, WAIT);
        assertThat(seen.path("forwarding_target").asText()).isEqualTo("proj/ghost");
        assertThat(seen.path("forwarding_count").asLong()).isEqualTo(2);
        assertThat(seen.path("origin_hub_id").asText()).isEqualTo("hub-a");
        assertThat(seen.path("payload").asText())
                .startsWith("dead-letter forwarding: peer hub 'hub-a' reports 2 directed messages to 'proj/ghost'");
        Await.until("A journals the report it sent", WAIT, () -> {
            try {
                return journaled(a).size() == 1;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        JsonNode out = journaled(a).get(0);
        assertThat(out.path("direction").asText()).isEqualTo("out");
        assertThat(out.path("target").asText()).isEqualTo("proj/ghost");
        assertThat(out.path("count").asLong()).isEqualTo(2);
        assertThat(out.path("origin_hub_id").asText()).isEqualTo("hub-a");
        assertThat(out.path("owner_hub_id").asText()).isEqualTo("hub-b");
        List<JsonNode> in = journaled(b);
        assertThat(in).hasSize(1);
        assertThat(in.get(0).path("direction").asText()).isEqualTo("in");
        assertThat(in.get(0).path("peer").asText()).isEqualTo("hub-a");
        assertThat(forwarder.outcomes("hub-b", "sent")).isEqualTo(1);

        // the 4th dead letter escalates again: the owner hears the grown count
        escalate(sender, "proj/ghost");
        JsonNode again = watcher.await(DeadLetterReportingTest::isForwarding, WAIT);
        assertThat(again.path("forwarding_count").asLong()).isEqualTo(4);
        watcher.send(watcher.frame("proj/b1", "state_request"));
        watcher.awaitType("state_snapshot", WAIT);
        assertThat(watcher.received()).as("only the two reports for proj/ghost reached the owner")
                .filteredOn(DeadLetterReportingTest::isForwarding).hasSize(2)
                .allMatch(f -> "proj/ghost".equals(f.path("forwarding_target").asText()));
        Await.until("A counts the second report read", WAIT, () -> forwarder.outcomes("hub-b", "sent") == 2);
    }

    @Test
    void anOwnerThatRefusesSilentlyGetsTheReportOnceAndNothingHappens() throws Exception {
        FedHub b = owner(false, 0); // no serving policy: every report is refused, silently (F5)
        HubClient watcher = b.agent("proj/b1");
        FedHub a = reporter(b.uri(), bCerts.server().pin());
        escalate(a.agent("aproj/sender"), "proj/ghost");
        DeadLetterForwarder forwarder = a.federation.deadLetterForwarder();
        Await.until("the owner read the report", WAIT, () -> forwarder.outcomes("hub-b", "sent") == 1);
        watcher.send(watcher.frame("proj/b1", "state_request"));
        watcher.awaitType("state_snapshot", WAIT);
        assertThat(watcher.received()).noneMatch(DeadLetterReportingTest::isForwarding);
        assertThat(journaled(b)).isEmpty();
        assertThat(forwarder.outcomes("hub-b", "transport_failure")).isZero();
    }

    @Test
    void anOwnerWithoutTheVerbAnswersAnErrorAndIsNotRetried() throws Exception {
        FakePeer plain = keep(new FakePeer(bCerts, r -> null)); // a hub-net server without the verb
        FedHub a = reporter(plain.uri(), bCerts.server().pin());
        escalate(a.agent("aproj/sender"), "proj/ghost");
        DeadLetterForwarder forwarder = a.federation.deadLetterForwarder();
        Await.until("the owner's error", WAIT, () -> forwarder.outcomes("hub-b", "answered_error") == 1);
        assertThat(forwarder.outcomes("hub-b", "sent")).isZero();
        assertThat(forwarder.outcomes("hub-b", "retried")).isZero();
        assertThat(journaled(a)).as("a report the owner refused is not journaled as sent").isEmpty();
    }

    @Test
    void anOwnerNotYetListeningIsRetriedUntilItIs() throws Exception {
        int port = freePort();
        FedHub a = reporter(URI.create("wss://127.0.0.1:" + port + "/"), bCerts.server().pin());
        escalate(a.agent("aproj/sender"), "proj/ghost");
        DeadLetterForwarder forwarder = a.federation.deadLetterForwarder();
        Await.until("a first failed attempt", WAIT, () -> forwarder.outcomes("hub-b", "retried") >= 1);
        FedHub b = owner(true, port);
        Await.until("a retry reached the owner", WAIT, () -> forwarder.outcomes("hub-b", "sent") == 1);
        Await.until("the owner journaled it", WAIT, () -> {
            try {
                return journaled(b).size() == 1;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        assertThat(journaled(b).get(0).path("count").asLong()).isEqualTo(2);
        assertThat(forwarder.outcomes("hub-b", "transport_failure")).isZero();
    }

    /**
     * A mesh leader's report still waiting (its first attempt failed) when the node loses the lead
     * is given up at its next attempt, counted {@code lead_lost}: a follower never opens the link
     * (docs/mesh.md: dead-letter reports are not resent across nodes).
     */
    @Test
    void aReportWaitingWhenTheNodeLosesTheLeadIsGivenUpAndNeverSentFromAFollower() throws Exception {
        int port = freePort();
        FedHub a = reporter(URI.create("wss://127.0.0.1:" + port + "/"), bCerts.server().pin());
        java.util.concurrent.atomic.AtomicBoolean leads = new java.util.concurrent.atomic.AtomicBoolean(true);
        DeadLetterForwarder forwarder = a.federation.deadLetterForwarder().onlyWhile(leads::get);
        escalate(a.agent("aproj/sender"), "proj/ghost");
        Await.until("a first failed attempt", WAIT, () -> forwarder.outcomes("hub-b", "retried") >= 1);
        leads.set(false);
        FedHub b = owner(true, port); // the owner listens now: a retry would reach it
        Await.until("given up at the next attempt", WAIT, () -> forwarder.outcomes("hub-b", "lead_lost") == 1);
        assertThat(forwarder.outcomes("hub-b", "sent")).isZero();
        assertThat(forwarder.outcomes("hub-b", "retried")).isEqualTo(1);
        assertThat(journaled(a)).isEmpty();
        assertThat(journaled(b)).isEmpty();
    }

    /**
     * The lead lost between the leader's check and its link (the leadership listener already
     * dropped the links): the link the attempt opened is dropped after it, so the cluster's hub id
     * is free at the owner for the new leader.
     */
    @Test
    void aLinkOpenedAsTheLeadWasLostIsDroppedAfterTheAttempt() throws Exception {
        FedHub b = owner(true, 0);
        FedHub a = reporter(b.uri(), bCerts.server().pin());
        java.util.concurrent.atomic.AtomicInteger checks = new java.util.concurrent.atomic.AtomicInteger();
        DeadLetterForwarder forwarder = a.federation.deadLetterForwarder()
                .onlyWhile(() -> checks.getAndIncrement() == 0); // leads at the check before the link, then no more
        escalate(a.agent("aproj/sender"), "proj/ghost");
        Await.until("the attempt ended", WAIT, () -> forwarder.outcomes("hub-b", "sent") == 1);
        Await.until("hub-a's link to the owner dropped", WAIT,
                () -> b.server.services().registry().session("hub-a") == null);
    }

    @Test
    void aWronglyPinnedOwnerIsGivenUpAfterTheLastAttempt() throws Exception {
        FedHub b = owner(true, 0);
        FedHub a = reporter(b.uri(), TestCertificates.selfSigned("x").pin());
        escalate(a.agent("aproj/sender"), "proj/ghost");
        DeadLetterForwarder forwarder = a.federation.deadLetterForwarder();
        Await.until("given up", WAIT, () -> forwarder.outcomes("hub-b", "transport_failure") == 1);
        assertThat(forwarder.outcomes("hub-b", "retried")).isEqualTo(DeadLetterForwarder.MAX_ATTEMPTS - 1);
        assertThat(forwarder.outcomes("hub-b", "sent")).isZero();
        assertThat(journaled(a)).isEmpty();
        assertThat(journaled(b)).isEmpty();
    }

    /** An owner whose host accepts and never answers (each connect takes 10 s) delays no other owner's reports. */
    @Test
    void anOwnerWhoseHostNeverAnswersDelaysNoOtherOwnersReport() throws Exception {
        FedHub b = owner(true, 0);
        HubClient watcher = b.agent("proj/b1");
        try (ServerSocket blackhole = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
            ForwardSettings relays = new ForwardSettings(ForwardSettings.byHub(List.of(
                    new ClaimRoute("hub-b", b.uri(), bCerts.server().pin()),
                    new ClaimRoute("hub-d", URI.create("wss://127.0.0.1:" + blackhole.getLocalPort() + "/"),
                            bCerts.server().pin()))), null, aCerts.clientFiles().cert(), aCerts.clientFiles().key(),
                    Duration.ofSeconds(2));
            FedHub a = keep(new FedHub(aCerts, dir.resolve("a.db"), new FederationSettings(ServingTrust.none(),
                    WatchSettings.none(), new NamespaceOwners("hub-a", Map.of("proj", "hub-b", "dead", "hub-d",
                    "aproj", "hub-a")), ForwardSettings.none(), null, FederationSettings.RelayPolicy.DEFAULT, relays)));
            DeadLetterForwarder forwarder = a.federation.deadLetterForwarder();
            forwarder.escalated(new DeadLetterEscalationEvent(0, "dead/ghost", 2, "aproj/sender", 2)); // its attempt first
            forwarder.escalated(new DeadLetterEscalationEvent(0, "proj/ghost", 2, "aproj/sender", 2));
            // before the dead owner's 10 s connect ends (room for a TLS connect on a loaded machine)
            JsonNode seen = watcher.await(DeadLetterReportingTest::isForwarding, Duration.ofSeconds(8));
            assertThat(seen.path("forwarding_target").asText()).isEqualTo("proj/ghost");
            assertThat(forwarder.outcomes("hub-d", "sent")).isZero();
        }
    }

    @Test
    void droppedReportsAreLoggedAtMostTwentyTimesAWindowAndAllCounted() throws Exception {
        FedHub a = reporter(URI.create("wss://127.0.0.1:" + freePort() + "/"), bCerts.server().pin()); // nobody listens
        DeadLetterForwarder forwarder = a.federation.deadLetterForwarder();
        Logger logger = (Logger) LoggerFactory.getLogger(DeadLetterForwarder.class);
        ListAppender<ILoggingEvent> lines = new ListAppender<>();
        lines.start();
        logger.addAppender(lines);
        try {
            int escalations = DeadLetterForwarder.MAX_WAITING + 100; // the first attempt waits for its retry meanwhile
            for (int i = 0; i < escalations; i++) {
                forwarder.escalated(new DeadLetterEscalationEvent(0, "proj/ghost-" + i, 2, "aproj/sender", 2));
            }
            long dropped = forwarder.outcomes("hub-b", "dropped");
            assertThat(dropped).as("beyond the queue, reports are dropped and counted")
                    .isGreaterThanOrEqualTo(escalations - DeadLetterForwarder.MAX_WAITING - 1);
            List<ILoggingEvent> dropLines;
            synchronized (lines) { // the appender's lock: AppenderBase.doAppend adds to the list under it
                dropLines = lines.list.stream().filter(e -> e.getFormattedMessage().contains(" dropped: ")).toList();
            }
            assertThat(dropLines).as("one window's log lines, not one per drop")
                    .hasSize(DeadLetterForwardingServer.MAX_LOG_LINES_PER_WINDOW);
        } finally {
            logger.detachAppender(lines);
        }
    }
}
