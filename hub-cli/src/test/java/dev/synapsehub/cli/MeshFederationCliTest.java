package dev.synapsehub.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.client.tls.ClientTls;
import dev.synapsehub.client.tls.TestCertificates;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A mesh is one hub to its federation peers. Every node serves {@code multihub_log_request}
 * from its journal copy with the cluster's one hub id and the same {@code (seq, event)} pairs,
 * so a standalone hub watching one node keeps its cursor when pointed at another (its first
 * poll there re-reads the last event it folded and would quarantine the peer on any difference).
 * With an ownership map, any node decides the claims a peer forwards in the cluster's namespaces
 * (once, whichever node a retry reaches) and refuses its own agents' claims in other hubs'.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class MeshFederationCliTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final Duration OBSERVE = Duration.ofSeconds(90);

    @TempDir
    Path dir;
    private final List<LoopbackHub> hubs = new CopyOnWriteArrayList<>();
    private TestCertificates.Identity server;
    private TestCertificates.PemPair serverFiles;
    /** The peer hub's client certificate (the follower's, or the forwarder's). */
    private TestCertificates.PemPair followerFiles;

    @AfterEach
    void stop() throws Exception {
        for (LoopbackHub h : hubs) {
            h.close();
        }
    }

    @Test
    void aFollowerWatchingOneNodeKeepsItsCursorWhenPointedAtAnother() throws Exception {
        trust("hub-f");
        List<HubDaemon> nodes = startMesh(List.of());

        HubClient alice = agent(nodes.get(1), "proj/alice");
        List<ObjectNode> grants = new ArrayList<>();
        for (int i = 1; i <= 10; i++) {
            grants.add(claim(alice, "proj/alice", "T-" + i));
        }
        alice.close();

        // every node serves the same log under the one hub id (once each has applied it)
        long end = grants.size(); // at least one event per grant
        List<ObjectNode> pages = new ArrayList<>();
        for (HubDaemon node : nodes) {
            pages.add(awaitPage(node, page -> page.path("log_end_seq").asLong() >= end));
        }
        for (ObjectNode page : pages) {
            assertThat(page.path("hub_id").asText()).isEqualTo("hub-m");
        }
        long logEnd = pages.stream().mapToLong(p -> p.path("log_end_seq").asLong()).min().orElseThrow();
        for (HubDaemon node : nodes) {
            ObjectNode page = awaitPage(node, p -> p.path("log_end_seq").asLong() >= logEnd);
            assertThat(page.path("events").size()).isGreaterThanOrEqualTo((int) logEnd);
            assertThat(page.path("events").get((int) logEnd - 1))
                    .isEqualTo(pages.get(0).path("events").get((int) logEnd - 1));
        }

        // a standalone follower watches n1 and folds the cluster's claims
        LoopbackHub followerHub = follower(nodes.get(0));
        JsonNode first = awaitObserved(followerHub, v -> claims(v) == 10 && v.path("cursor").asLong() >= logEnd
                && v.path("cursor").asLong() == v.path("log_end_seq").asLong());
        long cursor = first.path("cursor").asLong();
        followerHub.close();

        // one more claim through n1; the follower comes back pointed at n3 and resumes from its cursor
        HubClient bob = agent(nodes.get(0), "proj/bob");
        claim(bob, "proj/bob", "T-11");
        bob.close();
        LoopbackHub again = follower(nodes.get(2));
        JsonNode resumed = awaitObserved(again, v -> true);
        assertThat(resumed.path("cursor").asLong()).as("the mirror's cursor, before any poll of n3")
                .isGreaterThanOrEqualTo(cursor);
        JsonNode caughtUp = awaitObserved(again, v -> claims(v) == 11 && v.path("last_error").isNull());
        assertThat(caughtUp.path("quarantined").asBoolean()).as(caughtUp.toString()).isFalse();
        assertThat(caughtUp.path("cursor").asLong()).isGreaterThan(cursor);
        double folded = FederationProcessTest.sum(metrics(again), "synapse_multihub_events_folded_total");
        assertThat(folded).as("only the events after the cursor (and the one re-read) were pulled from n3")
                .isLessThanOrEqualTo(caughtUp.path("cursor").asLong() - cursor + 1)
                .isPositive();
    }

    @Test
    void anyNodeDecidesTheClaimsAPeerForwardsOnceAndRefusesItsAgentsClaimsInOtherHubsNamespaces() throws Exception {
        trust("hub-a");
        List<HubDaemon> nodes = startMesh(List.of("--namespace-owner", "proj=hub-m", "--namespace-owner", "lab=hub-a"));

        // hub-a forwards proj to the mesh through n1; the cluster grants it once, on every node
        HubClient bob = agent(nodes.get(2), "proj/bob");
        LoopbackHub forwarder = forwarder(nodes.get(0));
        HubClient alice = HubClient.connect(URI.create(forwarder.url()), WAIT);
        alice.register("proj/alice", null, WAIT);
        ObjectNode granted = keyedClaim(alice, "proj/alice", "T-1", "k-1");
        assertThat(granted.path("type").asText()).as(granted.toString()).isEqualTo("claim_granted");
        assertThat(granted.path("hub_id").asText()).isEqualTo("hub-a");
        long epoch = granted.path("epoch").asLong();
        ObjectNode seen = bob.await(f -> "claim_granted".equals(f.path("type").asText())
                && "T-1".equals(f.path("task_id").asText()), WAIT);
        assertThat(seen.path("owner").asText()).as("the grant is published on another node").isEqualTo("proj/alice");
        assertThat(seen.path("epoch").asLong()).isEqualTo(epoch);
        ObjectNode held = claimOutcome(bob, "proj/bob", "T-1");
        assertThat(held.path("type").asText()).as(held.toString()).isEqualTo("claim_denied");
        assertThat(held.path("payload").asText()).contains("proj/alice");
        alice.close();
        forwarder.close();

        // the same keyed claim retried through another node is answered, never granted again
        LoopbackHub again = forwarder(nodes.get(2));
        HubClient retry = HubClient.connect(URI.create(again.url()), WAIT);
        retry.register("proj/alice", null, WAIT);
        ObjectNode replayed = keyedClaim(retry, "proj/alice", "T-1", "k-1");
        assertThat(replayed.path("type").asText()).as(replayed.toString()).isEqualTo("claim_granted");
        assertThat(replayed.path("epoch").asLong()).isEqualTo(epoch);
        retry.close();

        // the cluster's own agents: a namespace another hub owns is refused (no route), so is an ungoverned one
        HubClient carol = agent(nodes.get(1), "lab/carol");
        ObjectNode remote = claimOutcome(carol, "lab/carol", "L-1");
        assertThat(remote.path("type").asText()).as(remote.toString()).isEqualTo("claim_denied");
        assertThat(remote.path("ownership").asText()).isEqualTo("remote");
        assertThat(remote.path("owner_hub_id").asText()).isEqualTo("hub-a");
        HubClient dan = agent(nodes.get(1), "ops/dan");
        ObjectNode ungoverned = claimOutcome(dan, "ops/dan", "O-1");
        assertThat(ungoverned.path("ownership").asText()).as(ungoverned.toString()).isEqualTo("ungoverned");
        HubClient erin = agent(nodes.get(0), "proj/erin");
        assertThat(claimOutcome(erin, "proj/erin", "P-1").path("type").asText()).isEqualTo("claim_granted");
        for (HubClient c : List.of(bob, carol, dan, erin)) {
            c.close();
        }
    }

    @Test
    void anyNodeForwardsItsAgentsClaimsToTheOwningHubAndAKeyedRetryThroughAnotherNodeIsNotGrantedTwice()
            throws Exception {
        // hub-a owns lab and trusts the cluster (hub-m) to forward claims in it
        Path a = java.nio.file.Files.createDirectories(dir.resolve("a"));
        TestCertificates.Identity ownerServer = TestCertificates.selfSigned("hub-a");
        TestCertificates.PemPair ownerFiles = ownerServer.write(a, "server");
        TestCertificates.Authority ca = TestCertificates.authority("fed-client-ca");
        TestCertificates.Identity meshClient = ca.issue("hub-m");
        TestCertificates.PemPair meshClientFiles = meshClient.write(dir, "mesh-client");
        // hub-obs reads hub-a's log: the cluster's name hub-m is bound to the leader's link to hub-a
        TestCertificates.Identity observer = ca.issue("hub-obs");
        TestCertificates.PemPair observerFiles = observer.write(dir, "observer");
        ca.writeCertificate(a, "client-ca");
        TestCertificates.writePrivate(a.resolve("federation.json"), "{\"version\":1,\"records\":[{"
                + "\"domain_id\":\"m.example\",\"namespaces\":[\"lab\"],\"certificate_pins\":[\""
                + meshClient.pin().text() + "\"],\"signing_key_ids\":[\"hub-m:2026\"],\"scope_grants\":[],"
                + "\"expires_at\":null,\"revoked\":false,"
                + "\"provenance\":{\"source\":\"ticket-9\",\"imported_at\":1.0,\"confirmed_by\":\"bob\"}},{"
                + "\"domain_id\":\"o.example\",\"namespaces\":[\"lab\"],\"certificate_pins\":[\""
                + observer.pin().text() + "\"],\"signing_key_ids\":[\"hub-obs:2026\"],\"scope_grants\":[],"
                + "\"expires_at\":null,\"revoked\":false,"
                + "\"provenance\":{\"source\":\"ticket-9\",\"imported_at\":1.0,\"confirmed_by\":\"bob\"}}]}");
        TestCertificates.writePrivate(a.resolve("serving-policy.json"), "{\"version\":1,"
                + "\"federation_store\":\"federation.json\",\"client_ca_file\":\"client-ca.pem\",\"grants\":[{"
                + "\"sender\":\"hub-m\",\"domain_id\":\"m.example\",\"namespace\":\"lab\","
                + "\"signing_key_id\":\"hub-m:2026\"},{"
                + "\"sender\":\"hub-obs\",\"domain_id\":\"o.example\",\"namespace\":\"lab\","
                + "\"signing_key_id\":\"hub-obs:2026\"}]}");
        LoopbackHub owner = new LoopbackHub();
        hubs.add(owner);
        HubDaemon ownerDaemon = owner.start("--port", "0", "--db", a.resolve("a.db").toString(), "--hub-id", "hub-a",
                "--namespace-owner", "lab=hub-a", "--namespace-owner", "proj=hub-m",
                "--tls-certfile", ownerFiles.cert().toString(), "--tls-keyfile", ownerFiles.key().toString(),
                "--multihub-serving-policy", a.resolve("serving-policy.json").toString());
        URI ownerUri = URI.create("wss://127.0.0.1:" + ownerDaemon.port());

        // the cluster (plain ws to its agents) routes lab to hub-a from every node
        List<HubDaemon> nodes = MeshNodes.start(hubs, dir, List.of("--hub-id", "hub-m",
                "--namespace-owner", "proj=hub-m", "--namespace-owner", "lab=hub-a",
                "--metrics", "--claim-peer", "hub-a=" + ownerUri, "--claim-peer-pin", "hub-a=" + ownerServer.pin().text(),
                "--multihub-client-certfile", meshClientFiles.cert().toString(),
                "--multihub-client-keyfile", meshClientFiles.key().toString()));

        // an agent of n1 claims in lab: n1 forwards it, hub-a grants it, and holds it against its own agents
        HubClient carol = plainAgent(nodes.get(0), "lab/carol");
        ObjectNode granted = keyedClaim(carol, "lab/carol", "L-1", "k-1");
        assertThat(granted.path("type").asText()).as(granted.toString()).isEqualTo("claim_granted");
        assertThat(granted.path("owner").asText()).isEqualTo("lab/carol");
        long epoch = granted.path("epoch").asLong();
        carol.close();
        try (HubClient dave = HubClient.connect(ownerUri, WAIT, ClientTls.pinned(ownerServer.pin()))) {
            dave.register("lab/dave", null, WAIT);
            ObjectNode held = claimOutcome(dave, "lab/dave", "L-1");
            assertThat(held.path("type").asText()).as("the grant lives on hub-a: " + held).isEqualTo("claim_denied");
            assertThat(held.path("payload").asText()).contains("lab/carol");
        }

        // carol retries the same keyed claim through n3: n3 forwards it, hub-a answers from its ledger
        HubClient again = plainAgent(nodes.get(2), "lab/carol");
        ObjectNode replayed = keyedClaim(again, "lab/carol", "L-1", "k-1");
        assertThat(replayed.path("type").asText()).as(replayed.toString()).isEqualTo("claim_granted");
        assertThat(replayed.path("epoch").asLong()).as("the first grant, not a second one").isEqualTo(epoch);
        again.close();
        ObjectNode ownerLog = ownerPage(ownerUri, ownerServer, observerFiles);
        List<JsonNode> grants = new ArrayList<>();
        for (JsonNode e : records(ownerLog, "claim")) {
            if ("L-1".equals(e.path("payload").path("task_id").asText())) {
                grants.add(e);
            }
        }
        assertThat(grants).as("hub-a journaled one grant for L-1: " + ownerLog).hasSize(1);

        // agents of all three nodes forward at once: the leader sends them all over the cluster's one link to
        // hub-a, and each is granted (MeshLeaderForwardingCliTest sends sixty, some denied)
        List<HubClient> crowd = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            HubClient c = plainAgent(nodes.get(i), "lab/crowd-" + i);
            crowd.add(c);
            for (int t = 0; t < 3; t++) {
                ObjectNode f = c.frame("lab/crowd-" + i, "claim");
                f.put("task_id", "C-" + i + "-" + t);
                f.putArray("paths").add("src/C-" + i + "-" + t);
                c.send(f);
            }
        }
        for (int i = 0; i < 3; i++) {
            for (int t = 0; t < 3; t++) {
                String task = "C-" + i + "-" + t;
                ObjectNode outcome = crowd.get(i).await(r -> task.equals(r.path("task_id").asText())
                        && ("claim_granted".equals(r.path("type").asText()) || "claim_denied".equals(r.path("type").asText())),
                        WAIT);
                assertThat(outcome.path("type").asText()).as(outcome.toString()).isEqualTo("claim_granted");
            }
            crowd.get(i).close();
        }
        ObjectNode afterCrowd = ownerPage(ownerUri, ownerServer, observerFiles);
        for (int i = 0; i < 3; i++) {
            for (int t = 0; t < 3; t++) {
                String task = "C-" + i + "-" + t;
                assertThat(records(afterCrowd, "claim").stream()
                        .filter(e -> task.equals(e.path("payload").path("task_id").asText())).count())
                        .as("hub-a journaled one grant for " + task).isEqualTo(1);
            }
        }

        // a claim of the cluster's own namespace is still decided by the cluster
        HubClient erin = plainAgent(nodes.get(1), "proj/erin");
        ObjectNode own = claimOutcome(erin, "proj/erin", "P-1");
        assertThat(own.path("type").asText()).as(own.toString()).isEqualTo("claim_granted");
        assertThat(own.path("hub_id").asText()).isEqualTo("hub-m");
        erin.close();
        List<Double> forwarded = new ArrayList<>();
        for (HubDaemon node : nodes) {
            forwarded.add(FederationProcessTest.sample(nodeMetrics(node), "synapse_forwarded_claims_total"));
        }
        assertThat(forwarded.stream().mapToDouble(Double::doubleValue).sum())
                .as("n1 forwarded the claim, n3 the retry, each node three of the crowd's: " + forwarded)
                .isEqualTo(11.0);
        assertThat(forwarded.get(1)).as("n2 forwarded only crowd claims").isGreaterThanOrEqualTo(3.0);
    }

    /** hub-a's log from the start, asked as hub-obs with its client certificate. */
    private static ObjectNode ownerPage(URI owner, TestCertificates.Identity ownerServer,
                                        TestCertificates.PemPair observer) throws Exception {
        try (HubClient peer = HubClient.connect(owner, WAIT, ClientTls.pinned(ownerServer.pin())
                .withClientCertificate(observer.cert(), observer.key()))) {
            peer.register("hub-obs", null, WAIT);
            ObjectNode request = peer.frame("hub-obs", "multihub_log_request");
            request.put("after_seq", 0);
            request.put("limit", 1000);
            peer.send(request);
            return peer.awaitType("multihub_log_snapshot", WAIT);
        }
    }

    private static String nodeMetrics(HubDaemon node) throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + node.port() + "/metrics")).timeout(WAIT).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(200);
        return r.body();
    }

    private static HubClient plainAgent(HubDaemon node, String name) throws Exception {
        HubClient c = HubClient.connect(URI.create("ws://127.0.0.1:" + node.port()), WAIT);
        c.register(name, null, WAIT);
        return c;
    }

    @Test
    void aPeersDeadLetterReportIsJournaledOnEveryNodeAndBroadcastWhereItArrived() throws Exception {
        trust("hub-f");
        List<HubDaemon> nodes = startMesh(List.of("--namespace-owner", "proj=hub-m", "--namespace-owner", "lab=hub-a"));
        HubClient watcher = agent(nodes.get(1), "proj/watcher");

        // hub-f reports dead letters through n2: one for the cluster's namespace, one for another hub's
        try (HubClient peer = HubClient.connect(URI.create("wss://127.0.0.1:" + nodes.get(1).port()), WAIT,
                ClientTls.pinned(server.pin()).withClientCertificate(followerFiles.cert(), followerFiles.key()))) {
            peer.register("hub-f", null, WAIT);
            peer.send(deadLetterReport(peer, "lab/ghost", 5));
            peer.send(deadLetterReport(peer, "proj/ghost", 2));
            ObjectNode broadcast = watcher.await(f -> "dead_letter_forwarding".equals(f.path("type").asText()), WAIT);
            assertThat(broadcast.path("forwarding_target").asText()).isEqualTo("proj/ghost");
            assertThat(broadcast.path("forwarding_count").asLong()).isEqualTo(2);
            assertThat(broadcast.path("origin_hub_id").asText()).isEqualTo("hub-f");
            assertThat(broadcast.path("hub_id").asText()).isEqualTo("hub-m");
            // fire-and-forget: the peer gets the broadcast like every socket of n2, and no answer of its own
            peer.await(f -> "dead_letter_forwarding".equals(f.path("type").asText()), WAIT);
            assertThat(peer.pending()).as("the peer is never answered")
                    .noneMatch(f -> "hub-f".equals(f.path("target").asText()) || "error".equals(f.path("type").asText()));
        }

        // the accepted report is one replicated audit record, the same on every node; the refused one is nowhere
        for (HubDaemon node : nodes) {
            ObjectNode page = awaitPage(node, p -> records(p, "dead_letter_forwarding").size() == 1);
            JsonNode record = records(page, "dead_letter_forwarding").get(0).path("payload");
            assertThat(record.path("target").asText()).isEqualTo("proj/ghost");
            assertThat(record.path("direction").asText()).isEqualTo("in");
            assertThat(record.path("owner_hub_id").asText()).isEqualTo("hub-m");
            assertThat(record.path("peer").asText()).isEqualTo("hub-f");
        }
        watcher.close();
    }

    private static ObjectNode deadLetterReport(HubClient peer, String target, int count) {
        ObjectNode f = peer.frame("hub-f", "dead_letter_forwarding");
        f.putObject("forwarding").put("target", target).put("count", count).put("origin_hub_id", "hub-f");
        return f;
    }

    private static List<JsonNode> records(ObjectNode page, String kind) {
        List<JsonNode> out = new ArrayList<>();
        for (JsonNode e : page.path("events")) {
            if (kind.equals(e.path("kind").asText())) {
                out.add(e);
            }
        }
        return out;
    }

    /** A standalone hub-a that owns lab and forwards proj to the mesh through {@code node}. */
    private LoopbackHub forwarder(HubDaemon node) throws Exception {
        LoopbackHub hub = new LoopbackHub();
        hubs.add(hub);
        hub.start("--port", "0", "--db", dir.resolve("a.db").toString(), "--hub-id", "hub-a",
                "--namespace-owner", "proj=hub-m", "--namespace-owner", "lab=hub-a",
                "--claim-peer", "hub-m=wss://127.0.0.1:" + node.port(), "--claim-peer-pin", "hub-m=" + server.pin().text(),
                "--multihub-client-certfile", followerFiles.cert().toString(),
                "--multihub-client-keyfile", followerFiles.key().toString());
        return hub;
    }

    /** A claim carrying {@code idemKey}; its reply (granted to {@code name}, or denied). */
    private static ObjectNode keyedClaim(HubClient agent, String name, String task, String idemKey) throws Exception {
        ObjectNode f = agent.frame(name, "claim");
        f.put("task_id", task);
        f.put("idem_key", idemKey);
        f.putArray("paths").add("src/" + task);
        agent.send(f);
        return agent.await(r -> task.equals(r.path("task_id").asText())
                && ("claim_granted".equals(r.path("type").asText()) && name.equals(r.path("owner").asText())
                || "claim_denied".equals(r.path("type").asText())), WAIT);
    }

    private static ObjectNode claimOutcome(HubClient agent, String name, String task) throws Exception {
        return FederationProcessTest.claim(agent, name, task, "src/" + task);
    }

    /** The cluster's server certificate, and a serving policy and store that trust {@code peer}'s client certificate. */
    private void trust(String peer) throws Exception {
        server = TestCertificates.selfSigned("hub-m"); // one server identity for the cluster's one hub id
        serverFiles = server.write(dir, "server");
        TestCertificates.Authority ca = TestCertificates.authority("fed-client-ca");
        TestCertificates.Identity client = ca.issue(peer);
        followerFiles = client.write(dir, "client");
        ca.writeCertificate(dir, "client-ca");
        TestCertificates.writePrivate(dir.resolve("federation.json"), "{\"version\":1,\"records\":[{"
                + "\"domain_id\":\"f.example\",\"namespaces\":[\"proj\"],\"certificate_pins\":[\"" + client.pin().text()
                + "\"],\"signing_key_ids\":[\"" + peer + ":2026\"],\"scope_grants\":[],\"expires_at\":null,\"revoked\":false,"
                + "\"provenance\":{\"source\":\"ticket-7\",\"imported_at\":1.0,\"confirmed_by\":\"bob\"}}]}");
        TestCertificates.writePrivate(dir.resolve("serving-policy.json"), "{\"version\":1,"
                + "\"federation_store\":\"federation.json\",\"client_ca_file\":\"client-ca.pem\",\"grants\":[{"
                + "\"sender\":\"" + peer + "\",\"domain_id\":\"f.example\",\"namespace\":\"proj\",\"signing_key_id\":\"" + peer + ":2026\"}]}");
    }

    /** Three nodes, each with the cluster's hub id, TLS and the serving policy, started together. */
    private List<HubDaemon> startMesh(List<String> extra) throws Exception {
        List<String> flags = new ArrayList<>(List.of("--hub-id", "hub-m",
                "--tls-certfile", serverFiles.cert().toString(), "--tls-keyfile", serverFiles.key().toString(),
                "--multihub-serving-policy", dir.resolve("serving-policy.json").toString()));
        flags.addAll(extra);
        return MeshNodes.start(hubs, dir, flags);
    }

    /** A standalone hub-f, with its journal and mirror in f.db, watching the mesh through {@code node}. */
    private LoopbackHub follower(HubDaemon node) throws Exception {
        LoopbackHub hub = new LoopbackHub();
        hubs.add(hub);
        hub.start("--port", "0", "--metrics", "--db", dir.resolve("f.db").toString(), "--hub-id", "hub-f",
                "--namespace-owner", "proj=hub-m",
                "--multihub-watch", "hub-m=wss://127.0.0.1:" + node.port(), "--multihub-watch-pin", "hub-m=" + server.pin().text(),
                "--multihub-client-certfile", followerFiles.cert().toString(),
                "--multihub-client-keyfile", followerFiles.key().toString(), "--multihub-watch-interval", "1");
        return hub;
    }

    private HubClient agent(HubDaemon node, String name) throws Exception {
        HubClient c = HubClient.connect(URI.create("wss://127.0.0.1:" + node.port()), WAIT, ClientTls.pinned(server.pin()));
        c.register(name, null, WAIT);
        return c;
    }

    private static ObjectNode claim(HubClient agent, String name, String task) throws Exception {
        ObjectNode granted = FederationProcessTest.claim(agent, name, task, "src/" + task);
        assertThat(granted.path("type").asText()).as(granted.toString()).isEqualTo("claim_granted");
        return granted;
    }

    /** Asks {@code node} for its log from the start, as hub-f, until the snapshot satisfies {@code condition}. */
    private ObjectNode awaitPage(HubDaemon node, Predicate<ObjectNode> condition) throws Exception {
        long deadline = System.nanoTime() + OBSERVE.toNanos();
        ObjectNode last = null;
        while (System.nanoTime() < deadline) {
            // one connection per request: the name hub-f is bound again by the follower later
            try (HubClient peer = HubClient.connect(URI.create("wss://127.0.0.1:" + node.port()), WAIT,
                    ClientTls.pinned(server.pin()).withClientCertificate(followerFiles.cert(), followerFiles.key()))) {
                peer.register("hub-f", null, WAIT);
                ObjectNode request = peer.frame("hub-f", "multihub_log_request");
                request.put("after_seq", 0);
                request.put("limit", 1000);
                peer.send(request);
                last = peer.awaitType("multihub_log_snapshot", WAIT);
            }
            if (condition.test(last)) {
                return last;
            }
            TimeUnit.MILLISECONDS.sleep(200); // a pause between requests, not a wait for an outcome
        }
        throw new AssertionError("no matching snapshot within " + OBSERVE + "; last " + last);
    }

    /** hub-f's advisory view of hub-m, asked for until it satisfies {@code condition}. */
    private static JsonNode awaitObserved(LoopbackHub follower, Predicate<JsonNode> condition) throws Exception {
        long deadline = System.nanoTime() + OBSERVE.toNanos();
        JsonNode last = null;
        // a name of its own per call: the previous call's reader may not have been seen leaving yet
        String name = "ops/reader-" + System.nanoTime();
        try (HubClient reader = HubClient.connect(URI.create(follower.url()), WAIT)) {
            reader.register(name, null, WAIT);
            while (System.nanoTime() < deadline) {
                reader.send(reader.frame(name, "multihub_observed_request"));
                ObjectNode observed = reader.awaitType("multihub_observed", WAIT);
                for (JsonNode v : observed.path("peers")) {
                    if ("hub-m".equals(v.path("peer").asText())) {
                        last = v;
                    }
                }
                if (last != null && condition.test(last)) {
                    return last;
                }
                TimeUnit.MILLISECONDS.sleep(200); // a pause between queries, not a wait for an outcome
            }
        }
        throw new AssertionError("hub-f's view of hub-m never matched within " + OBSERVE + "; last " + last);
    }

    private static long claims(JsonNode view) {
        long n = 0;
        for (JsonNode c : view.path("claims")) {
            if (c.path("live").asBoolean() && "hub-m".equals(c.path("observed_on").asText())) {
                n++;
            }
        }
        return n;
    }

    private static String metrics(LoopbackHub hub) throws Exception {
        String port = hub.url().substring(hub.url().lastIndexOf(':') + 1);
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + port + "/metrics")).timeout(WAIT).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(200);
        return r.body();
    }
}
