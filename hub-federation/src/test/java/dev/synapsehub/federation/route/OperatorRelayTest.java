package dev.synapsehub.federation.route;

import com.fasterxml.jackson.databind.JsonNode;
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
 * Operator relay (contract A5.1) between real hubs over mutual TLS: a peer authorised by the
 * serving policy with its live client certificate force-releases a task in a namespace this hub
 * owns; every gate refuses in the contract's order with its detail, and an applied relay is a
 * broadcast {@code release_granted} carrying only {@code task_id}, then the result, with the
 * release and an {@code operator_relay} audit record journaled in one commit.
 */
class OperatorRelayTest {
    @TempDir
    Path dir;
    Pki pki;
    Pki.HubCerts a;
    Pki.HubCerts stranger;
    Pki.HubCerts c;
    FedHub b;
    final List<AutoCloseable> open = new ArrayList<>();

    private FedHub owner(boolean requireReason) throws Exception {
        return owner(requireReason, Map.of("proj", "hub-b", "other", "hub-c"));
    }

    private FedHub owner(boolean requireReason, Map<String, String> owners) throws Exception {
        return owner(new FederationSettings.RelayPolicy(requireReason, false), owners);
    }

    private FedHub owner(FederationSettings.RelayPolicy relayPolicy, Map<String, String> owners) throws Exception {
        Path policy = TrustFiles.servingPolicy(dir.resolve("b-trust"), pki.clientCaFile(),
                List.of(TrustFiles.peering("a.example", "proj", "k", List.of(a.client().pin().text())),
                        TrustFiles.peering("c.example", "proj", "kc", List.of(c.client().pin().text()))),
                List.of(new TrustFiles.Grant("hub-a", "a.example", "proj", "k"),
                        new TrustFiles.Grant("hub-c", "c.example", "proj", "kc")));
        FedHub hub = new FedHub(pki.hub("hub-b"), dir.resolve("b.db"), new FederationSettings(
                ServingTrust.load(policy, m -> { }), WatchSettings.none(),
                new NamespaceOwners("hub-b", owners), ForwardSettings.none(), null, relayPolicy));
        open.add(hub);
        return hub;
    }

    @BeforeEach
    void pki() throws Exception {
        pki = new Pki(dir);
        a = pki.hub("hub-a");
        stranger = pki.hub("hub-x");
        c = pki.hub("hub-c");
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

    private static JsonNode snapshot(HubClient agent) throws Exception {
        agent.send(agent.frame("proj/b1", "state_request"));
        return agent.awaitType("state_snapshot", FedHub.WAIT).path("snapshot");
    }

    private void awaitOffline(String name) throws InterruptedException {
        long deadline = System.nanoTime() + FedHub.WAIT.toNanos();
        while (b.server.services().registry().isOnline(name)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(name + " still online after " + FedHub.WAIT);
            }
            Thread.sleep(10);
        }
    }

    private static ObjectNode relay(HubClient c, String name, String action, String namespace, String task,
                                    String reason) throws Exception {
        ObjectNode f = c.frame(name, "operator_relay_request");
        f.put("action", action).put("namespace", namespace).put("task_id", task).put("operator", "alice")
                .put("origin_hub_id", "hub-a");
        if (reason != null) {
            f.put("reason", reason);
        }
        c.send(f);
        return c.await(r -> "operator_relay_result".equals(r.path("type").asText())
                && task.equals(r.path("task_id").asText()), FedHub.WAIT);
    }

    private List<JournaledEvent> relayAudits() throws Exception {
        return b.durable.actor().read(s -> {
            try {
                return b.durable.journal().readAfter(0, 1000, Set.of("operator_relay"));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }).get();
    }

    @Test
    void theGatesRefuseInOrderAndNothingIsReleased() throws Exception {
        b = owner(true);
        HubClient agent = b.agent("proj/b1");
        assertThat(FedHub.claim(agent, "proj/b1", "T-1", "src/x").path("type").asText()).isEqualTo("claim_granted");

        HubClient noCert = peer("hub-a", null);
        assertThat(relay(noCert, "hub-a", "release", "proj", "T-1", "stuck").path("detail").asText())
                .isEqualTo("peer_not_authorised");
        noCert.close();
        awaitOffline("hub-a"); // the certified socket below binds the same name
        HubClient unknown = peer("hub-x", stranger);
        assertThat(relay(unknown, "hub-x", "release", "proj", "T-1", "stuck").path("detail").asText())
                .as("no grant for the sender").isEqualTo("peer_not_authorised");
        HubClient peer = peer("hub-a", a);
        ObjectNode action = relay(peer, "hub-a", "reassign", "proj", "T-1", "stuck");
        assertThat(action.path("detail").asText()).isEqualTo("unknown_action");
        assertThat(relay(peer, "hub-a", "release", "proj", "T-1", null).path("detail").asText())
                .isEqualTo("reason_required");
        assertThat(relay(peer, "hub-a", "release", "other", "O-1", "stuck").path("detail").asText())
                .as("the grant names proj only").isEqualTo("scope_not_granted");
        ObjectNode malformed = peer.frame("hub-a", "operator_relay_request");
        malformed.put("action", "release").put("namespace", "proj").put("task_id", "T-1");
        peer.send(malformed);
        assertThat(peer.awaitType("error", FedHub.WAIT).path("payload").asText()).isEqualTo("Malformed operator relay request");

        assertThat(action.path("applied").asBoolean(true)).isFalse();
        assertThat(action.path("pending").asBoolean(true)).isFalse();
        assertThat(action.path("owner_hub_id").asText()).isEqualTo("hub-b");
        assertThat(action.path("action").asText()).isEqualTo("reassign");
        assertThat(action.path("payload").asText()).isEqualTo("Operator relay result");
        double now = System.currentTimeMillis() / 1000.0;
        assertThat(b.durable.actor().read(s -> s.claims().liveClaim("T-1", now)).get()).isPresent();
        assertThat(relayAudits()).isEmpty();
    }

    @Test
    void anAuthorisedRelayForceReleasesAndIsJournaled() throws Exception {
        b = owner(false, Map.of("proj", "hub-b", "zzz", "hub-b"));
        HubClient agent = b.agent("proj/b1");
        assertThat(FedHub.claim(agent, "proj/b1", "T-1", "src/x").path("type").asText()).isEqualTo("claim_granted");
        HubClient outsider = b.agent("zzz/z1");
        assertThat(FedHub.claim(outsider, "zzz/z1", "Z-1", "src/z").path("type").asText()).isEqualTo("claim_granted");
        HubClient peer = peer("hub-a", a);

        assertThat(relay(peer, "hub-a", "release", "proj", "Z-1", null).path("detail").asText())
                .as("a task held outside the namespace").isEqualTo("task_not_in_namespace");
        assertThat(relay(peer, "hub-a", "release", "proj", "NOPE", null).path("detail").asText())
                .isEqualTo("task_not_claimed");

        ObjectNode result = relay(peer, "hub-a", "release", "proj", "T-1", "holder crashed");
        assertThat(result.path("applied").asBoolean()).isTrue();
        assertThat(result.path("pending").asBoolean(true)).isFalse();
        assertThat(result.path("detail").asText()).isEqualTo("released by operator alice: holder crashed");
        JsonNode released = agent.await(f -> "release_granted".equals(f.path("type").asText()), FedHub.WAIT);
        assertThat(released.path("payload").asText())
                .isEqualTo("Task 'T-1' in 'proj' was released by operator relay: released by operator alice: holder crashed");
        assertThat(released.path("task_id").asText()).isEqualTo("T-1");
        assertThat(released.has("owner")).as("only task_id").isFalse();
        assertThat(released.has("receipt")).isFalse();
        double now = System.currentTimeMillis() / 1000.0;
        assertThat(b.durable.actor().read(s -> s.claims().liveClaim("T-1", now)).get()).isEmpty();
        List<JournaledEvent> audits = relayAudits();
        assertThat(audits).hasSize(1);
        String audit = ((AuditRecordEvent) audits.get(0).event()).payloadJson();
        assertThat(audit).contains("\"task_id\":\"T-1\"").contains("\"operator\":\"alice\"").contains("\"peer\":\"hub-a\"");
        List<JournaledEvent> releases = b.durable.actor().read(s -> {
            try {
                return b.durable.journal().readAfter(0, 1000, Set.of("release"));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }).get();
        assertThat(releases).hasSize(1);
        assertThat(audits.get(0).seq()).as("release and audit in one commit, release first")
                .isEqualTo(releases.get(0).seq() + 1);
        HubClient again = b.agent("proj/b2");
        assertThat(FedHub.claim(again, "proj/b2", "T-1", "src/x").path("type").asText()).isEqualTo("claim_granted");
    }

    @Test
    void aNamespaceThisHubDoesNotOwnIsRefusedLast() throws Exception {
        b = owner(false, Map.of("proj", "hub-c"));
        HubClient peer = peer("hub-a", a);
        assertThat(relay(peer, "hub-a", "release", "proj", "T-1", null).path("detail").asText())
                .isEqualTo("namespace_not_owned");
        assertThat(relay(peer, "hub-a", "release", "other", "T-1", null).path("detail").asText())
                .as("the scope gate comes first").isEqualTo("scope_not_granted");
    }

    @Test
    void anOperatorRelayRecordIsAuditOnlyOnReplay() {
        // INV-RR-3: the release event frees the task; the audit record alone changes no lease
        dev.synapsehub.core.state.CoordinationState state = new dev.synapsehub.core.state.CoordinationState();
        dev.synapsehub.core.claim.Claim held = new dev.synapsehub.core.claim.Claim("T-9", "proj/b1", "proj/b1", "", 1.0,
                4_000_000_000.0, dev.synapsehub.core.claim.ClaimStatus.CLAIMED, "", "", List.of("src"), 1, 0, "", null);
        state.apply(new dev.synapsehub.core.event.ClaimSnapshotEvent(1.0,
                dev.synapsehub.core.event.ClaimSnapshotEvent.Kind.CLAIM, held));
        state.apply(new AuditRecordEvent(2.0, "operator_relay",
                "{\"action\":\"release\",\"namespace\":\"proj\",\"task_id\":\"T-9\",\"applied\":true}"));
        assertThat(state.claims().liveClaim("T-9", 3.0)).contains(held);
    }

    @Test
    void twoPersonRelayNeedsASecondDistinctPeer() throws Exception {
        b = owner(new FederationSettings.RelayPolicy(false, true), Map.of("proj", "hub-b"));
        HubClient agent = b.agent("proj/b1");
        assertThat(FedHub.claim(agent, "proj/b1", "T-1", "src/x").path("type").asText()).isEqualTo("claim_granted");
        assertThat(snapshot(agent).path("pending_relay_approvals").toString()).isEqualTo("[]");
        HubClient first = peer("hub-a", a);
        ObjectNode recorded = relay(first, "hub-a", "release", "proj", "T-1", null);
        assertThat(recorded.path("applied").asBoolean(true)).isFalse();
        assertThat(recorded.path("pending").asBoolean()).isTrue();
        assertThat(recorded.path("detail").asText()).isEqualTo("recorded; awaiting approval by a second operator");
        ObjectNode again = relay(first, "hub-a", "release", "proj", "T-1", null);
        assertThat(again.path("pending").asBoolean()).isTrue();
        assertThat(again.path("detail").asText())
                .isEqualTo("already recorded by this verified principal; awaiting a distinct principal");
        JsonNode listed = snapshot(agent).path("pending_relay_approvals");
        assertThat(listed.toString())
                .isEqualTo("[{\"action\":\"release\",\"namespace\":\"proj\",\"task_id\":\"T-1\",\"requester\":\"hub-a\"}]");
        double now = System.currentTimeMillis() / 1000.0;
        assertThat(b.durable.actor().read(s -> s.claims().liveClaim("T-1", now)).get()).as("still held").isPresent();

        HubClient second = peer("hub-c", c);
        ObjectNode applied = relay(second, "hub-c", "release", "proj", "T-1", null);
        assertThat(applied.path("applied").asBoolean()).isTrue();
        assertThat(applied.path("pending").asBoolean(true)).isFalse();
        assertThat(b.durable.actor().read(s -> s.claims().liveClaim("T-1", now)).get()).isEmpty();
        assertThat(snapshot(agent).path("pending_relay_approvals").toString()).isEqualTo("[]");
        assertThat(relayAudits()).hasSize(1);
        // the answers given as the owning side, on /metrics: two pending (recorded, then the same principal), one applied
        assertThat(dev.synapsehub.federation.testing.Http.get(b, "/metrics"))
                .contains("\nsynapse_operator_relays_served_total{outcome=\"applied\"} 1\n")
                .contains("\nsynapse_operator_relays_served_total{outcome=\"pending\"} 2\n")
                .contains("\nsynapse_operator_relays_served_total{outcome=\"refused\"} 0\n");
    }
}
