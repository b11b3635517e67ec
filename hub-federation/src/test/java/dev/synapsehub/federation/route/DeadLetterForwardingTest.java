package dev.synapsehub.federation.route;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.core.event.AuditRecordEvent;
import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.federation.FederationSettings;
import dev.synapsehub.federation.follow.WatchSettings;
import dev.synapsehub.federation.testing.FedHub;
import dev.synapsehub.federation.testing.Pki;
import dev.synapsehub.federation.testing.TrustFiles;
import dev.synapsehub.federation.trust.ServingTrust;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code dead_letter_forwarding} (contract §11.5, F5) on the owning hub, between real hubs over
 * mutual TLS: a report from a peer the serving policy authorises, about a recipient in a
 * namespace this hub owns, is journaled as an audit-only record and broadcast; every other report
 * (no certificate, unknown peer, malformed, another hub's namespace) gets nothing at all on the
 * wire and journals nothing.
 */
class DeadLetterForwardingTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;
    Pki pki;
    Pki.HubCerts a;
    Pki.HubCerts stranger;
    FedHub b;
    final List<AutoCloseable> open = new ArrayList<>();

    @BeforeEach
    void start() throws Exception {
        pki = new Pki(dir);
        a = pki.hub("hub-a");
        stranger = pki.hub("hub-x");
        Path policy = TrustFiles.servingPolicy(dir.resolve("b-trust"), pki.clientCaFile(),
                List.of(TrustFiles.peering("a.example", "proj", "k", List.of(a.client().pin().text()))),
                List.of(new TrustFiles.Grant("hub-a", "a.example", "proj", "k")));
        b = new FedHub(pki.hub("hub-b"), dir.resolve("b.db"), new FederationSettings(
                ServingTrust.load(policy, m -> { }), WatchSettings.none(),
                new NamespaceOwners("hub-b", Map.of("proj", "hub-b", "other", "hub-c")), ForwardSettings.none(), null,
                new FederationSettings.RelayPolicy(false, false)));
        open.add(b);
    }

    @AfterEach
    void close() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    /** A peer socket registered as {@code name}, presenting {@code certs}' client certificate (null: none). */
    private HubClient peer(String name, Pki.HubCerts certs) throws Exception {
        HubClient c = b.connect(certs == null ? b.pinned()
                : b.pinned().withClientCertificate(certs.clientFiles().cert(), certs.clientFiles().key()));
        c.awaitType("welcome", FedHub.WAIT);
        c.send(c.frame(name, "heartbeat"));
        return c;
    }

    private static ObjectNode report(HubClient c, String name, String target, Object count) {
        ObjectNode f = c.frame(name, "dead_letter_forwarding");
        ObjectNode fw = f.putObject("forwarding");
        fw.put("target", target).set("count", JSON.valueToTree(count));
        fw.put("origin_hub_id", name).put("owner_hub_id", "hub-b");
        return f;
    }

    /**
     * Everything {@code c} received up to the answer of a state request sent now: a reply is
     * published after everything the hub published before it.
     */
    private static List<ObjectNode> barrier(HubClient c, String name) throws Exception {
        c.send(c.frame(name, "state_request"));
        c.awaitType("state_snapshot", FedHub.WAIT);
        List<ObjectNode> got = new ArrayList<>(c.received());
        c.clearPending();
        int snapshot = 0;
        while (!"state_snapshot".equals(got.get(snapshot).path("type").asText())) {
            snapshot++;
        }
        return got.subList(0, snapshot);
    }

    private List<JournaledEvent> audits() throws Exception {
        return b.durable.actor().read(s -> {
            try {
                return b.durable.journal().readAfter(0, 1000, Set.of("dead_letter_forwarding"));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }).get();
    }

    private static boolean isForwarding(JsonNode f) {
        return "dead_letter_forwarding".equals(f.path("type").asText());
    }

    @Test
    void refusedReportsGetNothingAtAllAndJournalNothing() throws Exception {
        HubClient agent = b.agent("proj/b1");
        barrier(agent, "proj/b1");

        HubClient noCert = peer("hub-a", null);
        noCert.send(report(noCert, "hub-a", "proj/ghost", 2));
        assertThat(barrier(noCert, "hub-a")).noneMatch(DeadLetterForwardingTest::isForwarding)
                .noneMatch(f -> "error".equals(f.path("type").asText()));
        noCert.close();

        HubClient unknown = peer("hub-x", stranger);
        unknown.send(report(unknown, "hub-x", "proj/ghost", 2));
        assertThat(barrier(unknown, "hub-x")).as("no grant for the sender").noneMatch(DeadLetterForwardingTest::isForwarding)
                .noneMatch(f -> "error".equals(f.path("type").asText()));

        long deadline = System.nanoTime() + FedHub.WAIT.toNanos();
        while (b.server.services().registry().isOnline("hub-a")) { // the certified socket below binds the same name
            assertThat(System.nanoTime()).as("hub-a still online").isLessThan(deadline);
            Thread.sleep(10);
        }
        HubClient peer = peer("hub-a", a);
        barrier(peer, "hub-a"); // its welcome and presence
        List<ObjectNode> malformed = new ArrayList<>();
        malformed.add(report(peer, "hub-a", "proj/ghost", 0));
        malformed.add(report(peer, "hub-a", "proj/ghost", 1.5));
        malformed.add(report(peer, "hub-a", "  ", 1));
        ObjectNode otherOrigin = report(peer, "hub-a", "proj/ghost", 1);
        ((ObjectNode) otherOrigin.get("forwarding")).put("origin_hub_id", "hub-z");
        malformed.add(otherOrigin);
        ObjectNode notObject = peer.frame("hub-a", "dead_letter_forwarding");
        notObject.put("forwarding", "proj/ghost");
        malformed.add(notObject);
        malformed.add(report(peer, "hub-a", "other/ghost", 1)); // owned by hub-c
        malformed.add(report(peer, "hub-a", "ghost", 1)); // no namespace: ungoverned under a map
        for (ObjectNode f : malformed) {
            peer.send(f);
            assertThat(barrier(peer, "hub-a")).as(f.toString()).isEmpty();
        }
        assertThat(barrier(agent, "proj/b1")).noneMatch(DeadLetterForwardingTest::isForwarding);
        assertThat(audits()).isEmpty();
    }

    @Test
    void anAuthorisedReportForAnOwnedNamespaceIsJournaledAndBroadcast() throws Exception {
        HubClient agent = b.agent("proj/b1");
        HubClient peer = peer("hub-a", a);
        barrier(peer, "hub-a"); // its welcome and presence
        peer.send(report(peer, "hub-a", " proj/ghost ", 2));
        ObjectNode seen = agent.await(DeadLetterForwardingTest::isForwarding, FedHub.WAIT);
        assertThat(seen.path("target").asText()).isEqualTo("all");
        assertThat(seen.path("sender").asText()).isEqualTo("SynapseHub");
        assertThat(seen.path("payload").asText())
                .startsWith("dead-letter forwarding: peer hub 'hub-a' reports 2 directed messages to 'proj/ghost' — ");
        assertThat(seen.path("forwarding_target").asText()).isEqualTo("proj/ghost");
        assertThat(seen.path("forwarding_count").isIntegralNumber()).isTrue();
        assertThat(seen.path("forwarding_count").asLong()).isEqualTo(2);
        assertThat(seen.path("origin_hub_id").asText()).isEqualTo("hub-a");
        assertThat(barrier(peer, "hub-a")).as("no reply to the peer, only the broadcast")
                .allMatch(DeadLetterForwardingTest::isForwarding);

        List<JournaledEvent> audits = audits();
        assertThat(audits).hasSize(1);
        JsonNode record = JSON.readTree(((AuditRecordEvent) audits.get(0).event()).payloadJson());
        assertThat(record.path("target").asText()).isEqualTo("proj/ghost");
        assertThat(record.path("count").asLong()).isEqualTo(2);
        assertThat(record.path("origin_hub_id").asText()).isEqualTo("hub-a");
        assertThat(record.path("owner_hub_id").asText()).isEqualTo("hub-b");
        assertThat(record.path("direction").asText()).isEqualTo("in");
        assertThat(record.path("peer").asText()).isEqualTo("hub-a");
    }

    @Test
    void aPeerHasAtMostSixtyReportsAcceptedPerMinuteAndTheRestAreDropped() throws Exception {
        HubClient agent = b.agent("proj/b1");
        HubClient peer = peer("hub-a", a);
        barrier(peer, "hub-a");
        barrier(agent, "proj/b1");
        int limit = DeadLetterForwardingServer.MAX_REPORTS_PER_WINDOW;
        for (int i = 0; i <= limit; i++) {
            peer.send(report(peer, "hub-a", "proj/ghost-" + i, 1));
        }
        assertThat(barrier(peer, "hub-a")).as("never answered").allMatch(DeadLetterForwardingTest::isForwarding);
        for (int i = 0; i < limit; i++) {
            agent.await(DeadLetterForwardingTest::isForwarding, FedHub.WAIT);
        }
        // every report's audit was handed to the writer before the barrier's reply: the journal is complete
        List<JournaledEvent> audits = audits();
        assertThat(audits).hasSize(limit);
        assertThat(audits).noneMatch(e -> ((AuditRecordEvent) e.event()).payloadJson().contains("proj/ghost-" + limit));
        assertThat(barrier(agent, "proj/b1")).as("everything the agent got since the reports were sent")
                .filteredOn(DeadLetterForwardingTest::isForwarding).hasSize(limit);
    }
}
