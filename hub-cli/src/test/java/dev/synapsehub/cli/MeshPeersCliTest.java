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
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The peers file and {@code --relay-peer} on a mesh (docs/mesh.md, "Federation on a mesh node"):
 * each node reads and reloads its own peers file, and the routes it holds feed the leader's links,
 * so an edit on a running mesh is used by the next forward through a follower and an invalid edit
 * fails closed; an operator's relay taken by a follower goes over the leader's one link to the
 * owner and its answer comes back as on a single hub; the cluster's dead-letter reports go once
 * per escalation of the replicated count, whichever nodes the chats came through.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class MeshPeersCliTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path dir;
    private final List<LoopbackHub> hubs = new CopyOnWriteArrayList<>();
    private TestCertificates.Identity ownerServer;
    private TestCertificates.PemPair meshClientFiles;
    private TestCertificates.PemPair observerFiles;
    private URI ownerUri;

    @AfterEach
    void stop() throws Exception {
        for (LoopbackHub h : hubs) {
            h.close();
        }
    }

    @Test
    void aPeersFileEditOnARunningMeshIsUsedForTheNextForwardThroughAFollowerAndAnInvalidEditFailsClosed()
            throws Exception {
        startOwner();
        Path peers = dir.resolve("peers.json");
        // the route to hub-a points nowhere at start: a forward fails as a transport failure
        edit(peers, claimRoute("wss://127.0.0.1:1"));
        List<HubDaemon> nodes = MeshNodes.start(hubs, dir, List.of("--hub-id", "hub-m",
                "--namespace-owner", "proj=hub-m", "--namespace-owner", "lab=hub-a", "--metrics",
                "--federation-peers", peers.toString(),
                "--multihub-client-certfile", meshClientFiles.cert().toString(),
                "--multihub-client-keyfile", meshClientFiles.key().toString()));
        int leader = leaderIndex(nodes);
        HubDaemon follower = nodes.get((leader + 1) % 3);
        try (HubClient carol = agent(follower, "lab/carol")) {
            ObjectNode refused = claim(carol, "lab/carol", "P-0");
            assertPlainRefusal(refused);

            // the route changed on the running mesh: the next forwards through the follower reach hub-a
            edit(peers, claimRoute(ownerUri.toString()));
            ObjectNode granted = claimUntil(carol, "lab/carol", "P-1", g -> "claim_granted".equals(g.path("type").asText()));
            assertThat(granted.path("owner").asText()).isEqualTo("lab/carol");

            // an edit that does not validate: refused, never sent on the routes that were in force before
            long invalidBefore = sum(nodes, "synapse_federation_peers_file_invalid_total");
            edit(peers, "{\"version\":1,\"claim\":[{\"hub_id\":\"hub-a\",\"uri\":\"http://x/\"}]}");
            awaitSum(nodes, "synapse_federation_peers_file_invalid_total", invalidBefore + 3);
            ObjectNode closed = claim(carol, "lab/carol", "P-2");
            assertPlainRefusal(closed);
            assertThat(sample(follower, "synapse_federation_peers_file_refusals_total"))
                    .as("the follower refused the forward for the invalid file").isGreaterThanOrEqualTo(1.0);
            assertThat(claimRecords(ownerPage(), "P-2")).as("nothing reached hub-a").isEmpty();

            // fixed again: forwards go on; then the route removed: refused with a single hub's answer
            edit(peers, claimRoute(ownerUri.toString()));
            claimUntil(carol, "lab/carol", "P-3", g -> "claim_granted".equals(g.path("type").asText()));
            edit(peers, "{\"version\":1,\"relay\":[]}");
            ObjectNode removed = claimUntil(carol, "lab/carol", "P-4", g -> "claim_denied".equals(g.path("type").asText()));
            assertPlainRefusal(removed);
        }
    }

    @Test
    void anOperatorRelayThroughAFollowerAndTheClustersDeadLetterReportsGoOverTheLeadersLinkOnce() throws Exception {
        startOwner();
        List<HubDaemon> nodes = MeshNodes.start(hubs, dir, List.of("--hub-id", "hub-m",
                "--namespace-owner", "proj=hub-m", "--namespace-owner", "lab=hub-a", "--metrics",
                "--relay-peer", "hub-a=" + ownerUri, "--relay-peer-pin", "hub-a=" + ownerServer.pin().text(),
                "--dead-letter-escalation", "2",
                "--multihub-client-certfile", meshClientFiles.cert().toString(),
                "--multihub-client-keyfile", meshClientFiles.key().toString()));
        int leader = leaderIndex(nodes);
        HubDaemon follower = nodes.get((leader + 1) % 3);
        HubDaemon other = nodes.get((leader + 2) % 3);
        try (HubClient dave = HubClient.connect(ownerUri, WAIT, ClientTls.pinned(ownerServer.pin()))) {
            dave.register("lab/dave", null, WAIT);
            assertThat(FederationProcessTest.claim(dave, "lab/dave", "R-1", "src/R-1").path("type").asText())
                    .isEqualTo("claim_granted");

            // an operator on the follower's machine: relayed over the leader's link, hub-a's answer returned
            ObjectNode first;
            try (HubClient ops = agent(follower, "ops/alice")) {
                first = relay(ops, "R-1", "r-1");
            }
            assertThat(first.path("applied").asBoolean()).as(first.toString()).isTrue();
            assertThat(first.path("owner_hub_id").asText()).isEqualTo("hub-a");
            assertThat(first.path("detail").asText()).isEqualTo("released by operator alice: stuck");
            assertThat(first.has("forward_error")).isFalse();
            dave.await(f -> "release_granted".equals(f.path("type").asText()) && "R-1".equals(f.path("task_id").asText()),
                    WAIT);

            // dave takes it again; the keyed retry through the third node is answered from hub-a's ledger
            assertThat(FederationProcessTest.claim(dave, "lab/dave", "R-1", "src/R-1").path("type").asText())
                    .isEqualTo("claim_granted");
            ObjectNode retried;
            try (HubClient ops = agent(other, "ops/alice")) {
                retried = relay(ops, "R-1", "r-1");
            }
            assertThat(retried.path("applied").asBoolean()).as(retried.toString()).isTrue();
            assertThat(retried.path("detail").asText()).isEqualTo(first.path("detail").asText());
            List<JsonNode> relays = records(ownerPage(), "operator_relay");
            assertThat(relays).as("hub-a applied one relay, from hub-m: " + relays).hasSize(1);
            assertThat(relays.get(0).path("payload").path("peer").asText()).isEqualTo("hub-m");
        }

        // four dead letters to lab/ghost through three nodes: the replicated count escalates at 2 and 4,
        // and the cluster reports each once
        List<HubClient> senders = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            senders.add(agent(nodes.get(i), "proj/sender-" + i));
        }
        int[] through = {(leader + 1) % 3, (leader + 2) % 3, leader, (leader + 1) % 3};
        for (int k = 0; k < through.length; k++) {
            HubClient s = senders.get(through[k]);
            ObjectNode chat = s.frame("proj/sender-" + through[k], "chat");
            chat.put("target", "lab/ghost").put("payload", "are you there? " + k);
            s.send(chat);
            long count = k + 1;
            if (count % 2 == 0) { // the sender's node publishes the escalation; wait so the order is known
                s.await(f -> "dead_letter_escalation".equals(f.path("type").asText())
                        && f.path("escalation_count").asLong() == count, WAIT);
            }
        }
        ObjectNode page = awaitOwnerPage(p -> records(p, "dead_letter_forwarding").size() >= 2);
        awaitSum(nodes, "synapse_dead_letter_forwardings_total{owner=\"hub-a\",outcome=\"sent\"}", 2);
        List<JsonNode> reports = records(ownerPage(), "dead_letter_forwarding");
        assertThat(reports).as("one report per escalation, not one per node: " + page).hasSize(2);
        assertThat(reports.get(0).path("payload").path("count").asLong()).isEqualTo(2);
        assertThat(reports.get(1).path("payload").path("count").asLong()).isEqualTo(4);
        for (JsonNode r : reports) {
            assertThat(r.path("payload").path("target").asText()).isEqualTo("lab/ghost");
            assertThat(r.path("payload").path("peer").asText()).isEqualTo("hub-m");
        }
        assertThat(sample(nodes.get(leader), "synapse_dead_letter_forwardings_total{owner=\"hub-a\",outcome=\"sent\"}"))
                .as("the leader sent both").isEqualTo(2.0);
        for (HubClient s : senders) {
            s.close();
        }
    }

    private static void assertPlainRefusal(ObjectNode f) {
        assertThat(f.path("type").asText()).as(f.toString()).isEqualTo("claim_denied");
        assertThat(f.path("ownership").asText()).as(f.toString()).isEqualTo("remote");
        assertThat(f.path("owner_hub_id").asText()).isEqualTo("hub-a");
        assertThat(f.has("forward_error")).as(f.toString()).isFalse();
    }

    private String claimRoute(String uri) {
        return "{\"version\":1,\"claim\":[{\"hub_id\":\"hub-a\",\"uri\":\"" + uri + "\",\"pin\":\""
                + ownerServer.pin().text() + "\"}]}";
    }

    /** Replaces the peers file in one step (a watcher never reads half an edit). */
    private static void edit(Path peers, String text) throws Exception {
        Path next = peers.resolveSibling(peers.getFileName() + ".next");
        TestCertificates.writePrivate(next, text);
        Files.move(next, peers, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    /** Claims {@code prefix-1}, {@code prefix-2}, … until an outcome satisfies {@code done} (each node checks its file about once a second). */
    private static ObjectNode claimUntil(HubClient agent, String name, String prefix, Predicate<ObjectNode> done)
            throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        ObjectNode last = null;
        for (int i = 1; System.nanoTime() < deadline; i++) {
            last = claim(agent, name, prefix + "-" + i);
            if (done.test(last)) {
                return last;
            }
            TimeUnit.MILLISECONDS.sleep(200); // a pause between claims, not a wait for an outcome
        }
        throw new AssertionError("no matching outcome within " + WAIT + "; last " + last);
    }

    private static ObjectNode claim(HubClient agent, String name, String task) throws Exception {
        ObjectNode f = agent.frame(name, "claim");
        f.put("task_id", task);
        f.putArray("paths").add("src/" + task);
        agent.send(f);
        return agent.await(r -> task.equals(r.path("task_id").asText())
                && ("claim_granted".equals(r.path("type").asText()) || "claim_denied".equals(r.path("type").asText())),
                WAIT);
    }

    private static ObjectNode relay(HubClient ops, String task, String idemKey) throws Exception {
        ObjectNode f = ops.frame("ops/alice", "operator_relay_request");
        f.put("action", "release").put("namespace", "lab").put("task_id", task).put("operator", "alice")
                .put("origin_hub_id", "hub-m").put("reason", "stuck").put("idem_key", idemKey);
        ops.send(f);
        return ops.await(r -> "operator_relay_result".equals(r.path("type").asText())
                && task.equals(r.path("task_id").asText()), WAIT);
    }

    /** hub-a owns lab and trusts the cluster (hub-m) with it, and hub-obs to read its log. */
    private void startOwner() throws Exception {
        Path a = Files.createDirectories(dir.resolve("a"));
        ownerServer = TestCertificates.selfSigned("hub-a");
        TestCertificates.PemPair ownerFiles = ownerServer.write(a, "server");
        TestCertificates.Authority ca = TestCertificates.authority("fed-client-ca");
        TestCertificates.Identity meshClient = ca.issue("hub-m");
        meshClientFiles = meshClient.write(dir, "mesh-client");
        TestCertificates.Identity observer = ca.issue("hub-obs");
        observerFiles = observer.write(dir, "observer");
        ca.writeCertificate(a, "client-ca");
        TestCertificates.writePrivate(a.resolve("federation.json"), "{\"version\":1,\"records\":["
                + record("m.example", meshClient, "hub-m:2026") + "," + record("o.example", observer, "hub-obs:2026") + "]}");
        TestCertificates.writePrivate(a.resolve("serving-policy.json"), "{\"version\":1,"
                + "\"federation_store\":\"federation.json\",\"client_ca_file\":\"client-ca.pem\",\"grants\":["
                + "{\"sender\":\"hub-m\",\"domain_id\":\"m.example\",\"namespace\":\"lab\",\"signing_key_id\":\"hub-m:2026\"},"
                + "{\"sender\":\"hub-obs\",\"domain_id\":\"o.example\",\"namespace\":\"lab\",\"signing_key_id\":\"hub-obs:2026\"}]}");
        LoopbackHub owner = new LoopbackHub();
        hubs.add(owner);
        HubDaemon daemon = owner.start("--port", "0", "--db", a.resolve("a.db").toString(), "--hub-id", "hub-a",
                "--metrics", "--namespace-owner", "lab=hub-a", "--namespace-owner", "proj=hub-m",
                "--tls-certfile", ownerFiles.cert().toString(), "--tls-keyfile", ownerFiles.key().toString(),
                "--multihub-serving-policy", a.resolve("serving-policy.json").toString());
        ownerUri = URI.create("wss://127.0.0.1:" + daemon.port());
    }

    private static String record(String domain, TestCertificates.Identity who, String key) {
        return "{\"domain_id\":\"" + domain + "\",\"namespaces\":[\"lab\"],\"certificate_pins\":[\"" + who.pin().text()
                + "\"],\"signing_key_ids\":[\"" + key + "\"],\"scope_grants\":[],\"expires_at\":null,\"revoked\":false,"
                + "\"provenance\":{\"source\":\"ticket-9\",\"imported_at\":1.0,\"confirmed_by\":\"bob\"}}";
    }

    private static int leaderIndex(List<HubDaemon> nodes) throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() < deadline) {
            for (int i = 0; i < nodes.size(); i++) {
                if (nodes.get(i).meshStatus().leading()) {
                    return i;
                }
            }
            TimeUnit.MILLISECONDS.sleep(100); // a pause between looks, not a wait for an outcome
        }
        throw new AssertionError("no node leads within " + WAIT);
    }

    /** hub-a's log from the start, read as hub-obs (the cluster's name is bound to the leader's link). */
    private ObjectNode ownerPage() throws Exception {
        try (HubClient peer = HubClient.connect(ownerUri, WAIT, ClientTls.pinned(ownerServer.pin())
                .withClientCertificate(observerFiles.cert(), observerFiles.key()))) {
            peer.register("hub-obs", null, WAIT);
            ObjectNode request = peer.frame("hub-obs", "multihub_log_request");
            request.put("after_seq", 0);
            request.put("limit", 1000);
            peer.send(request);
            return peer.awaitType("multihub_log_snapshot", WAIT);
        }
    }

    private ObjectNode awaitOwnerPage(Predicate<ObjectNode> condition) throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        ObjectNode last = null;
        while (System.nanoTime() < deadline) {
            last = ownerPage();
            if (condition.test(last)) {
                return last;
            }
            TimeUnit.MILLISECONDS.sleep(200); // a pause between reads, not a wait for an outcome
        }
        throw new AssertionError("no matching page of hub-a within " + WAIT + "; last " + last);
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

    private static List<JsonNode> claimRecords(ObjectNode page, String task) {
        List<JsonNode> out = new ArrayList<>();
        for (JsonNode e : records(page, "claim")) {
            if (task.equals(e.path("payload").path("task_id").asText())) {
                out.add(e);
            }
        }
        return out;
    }

    private static double sample(HubDaemon node, String metric) throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + node.port() + "/metrics")).timeout(WAIT).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(200);
        for (String line : r.body().split("\n")) { // a labelled counter has no line until it counts
            if (line.startsWith(metric + " ")) {
                return Double.parseDouble(line.substring(metric.length() + 1).trim());
            }
        }
        return 0;
    }

    private static long sum(List<HubDaemon> nodes, String metric) throws Exception {
        long total = 0;
        for (HubDaemon n : nodes) {
            total += (long) Math.max(0, sample(n, metric));
        }
        return total;
    }

    /** Waits until {@code metric} summed over the nodes reaches {@code atLeast}. */
    private static void awaitSum(List<HubDaemon> nodes, String metric, long atLeast) throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        long last = -1;
        while (System.nanoTime() < deadline) {
            last = sum(nodes, metric);
            if (last >= atLeast) {
                return;
            }
            TimeUnit.MILLISECONDS.sleep(200); // a pause between looks, not a wait for an outcome
        }
        throw new AssertionError(metric + " summed to " + last + ", not " + atLeast + ", within " + WAIT);
    }

    private static HubClient agent(HubDaemon node, String name) throws Exception {
        HubClient c = HubClient.connect(URI.create("ws://127.0.0.1:" + node.port()), WAIT);
        c.register(name, null, WAIT);
        return c;
    }
}
