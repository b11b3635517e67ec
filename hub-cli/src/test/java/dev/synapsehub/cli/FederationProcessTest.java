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
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Three hubs as three separate {@code synapse-hub} processes, configured as docs/federation.md
 * tells operators (owners {@code lab=hub-a}, {@code proj=hub-b}, {@code ops=hub-c}; a client CA,
 * self-signed server certificates trusted by pin, federation stores, serving policies; every hub
 * forwards to the owners and watches the others). A claim made on hub-a in hub-b's namespace is
 * granted once, by hub-b only (INV-MH-1); hub-c's advisory fold shows it and grants nothing
 * (INV-MH-2); with hub-b killed (SIGKILL) a forwarded claim is refused, never granted, and the
 * observer keeps its last observation (INV-CR-4: fail closed); hub-b restarted on its journal
 * still holds the first grant and forwarding and observation recover.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class FederationProcessTest {
    /** Generous bounds: three JVMs and the test share two loaded cores. */
    static final Duration WAIT = Duration.ofSeconds(60);
    /** Longer than the watch's backoff can grow while a peer is down or starting (1, 2, 4, ... s). */
    static final Duration OBSERVE = Duration.ofSeconds(150);

    @TempDir
    Path dir;
    private final Closer open = new Closer();

    @AfterEach
    void stop() throws Exception {
        open.close();
    }

    private <T extends AutoCloseable> T keep(T c) {
        return open.keep(c);
    }

    /** One hub's identity: its id, its letter, its directory, its server certificate pin. */
    private record Hub(String id, String letter, Path dir, TestCertificates.Identity server, TestCertificates.Identity client) {
        String pin() {
            return server.pin().text();
        }

        String clientPin() {
            return client.pin().text();
        }
    }

    private static final Map<String, String> OWNERS = new LinkedHashMap<>(Map.of("lab", "hub-a", "proj", "hub-b",
            "ops", "hub-c"));

    @Test
    void aForwardedClaimIsGrantedOnceByTheOwnerObservedAdvisoryAndFailsClosedWhileTheOwnerIsDown() throws Exception {
        // 1. certificates: one CA for the hubs' client certificates, a self-signed server certificate each
        TestCertificates.Authority ca = TestCertificates.authority("fed-client-ca");
        Map<String, Hub> hubs = new LinkedHashMap<>();
        for (String letter : List.of("a", "b", "c")) {
            Path d = Files.createDirectories(dir.resolve(letter));
            String id = "hub-" + letter;
            Hub h = new Hub(id, letter, d, TestCertificates.selfSigned(id), ca.issue(id));
            h.server().write(d, "server");
            h.client().write(d, "client");
            ca.writeCertificate(d, "client-ca");
            hubs.put(id, h);
        }
        // 2-3. each hub's store holds the others' peerings; its policy grants its own namespace to them
        for (Hub h : hubs.values()) {
            List<String> records = new ArrayList<>();
            List<String> grants = new ArrayList<>();
            String owned = OWNERS.entrySet().stream().filter(e -> e.getValue().equals(h.id())).findFirst()
                    .orElseThrow().getKey();
            for (Hub peer : hubs.values()) {
                if (peer == h) {
                    continue;
                }
                records.add("{\"domain_id\":\"" + peer.letter() + ".example\",\"namespaces\":[\"proj\",\"ops\",\"lab\"],"
                        + "\"certificate_pins\":[\"" + peer.clientPin() + "\"],\"signing_key_ids\":[\"" + peer.id()
                        + ":2026\"],\"scope_grants\":[],\"expires_at\":null,\"revoked\":false,"
                        + "\"provenance\":{\"source\":\"ticket-7\",\"imported_at\":1.0,\"confirmed_by\":\"bob\"}}");
                grants.add("{\"sender\":\"" + peer.id() + "\",\"domain_id\":\"" + peer.letter() + ".example\","
                        + "\"namespace\":\"" + owned + "\",\"signing_key_id\":\"" + peer.id() + ":2026\"}");
            }
            TestCertificates.writePrivate(h.dir().resolve("federation.json"),
                    "{\"version\":1,\"records\":[" + String.join(",", records) + "]}");
            TestCertificates.writePrivate(h.dir().resolve("serving-policy.json"), "{\"version\":1,"
                    + "\"federation_store\":\"federation.json\",\"client_ca_file\":\"client-ca.pem\",\"grants\":["
                    + String.join(",", grants) + "]}");
        }
        Map<String, Integer> ports = new LinkedHashMap<>();
        Set<Integer> taken = new LinkedHashSet<>();
        for (String id : hubs.keySet()) {
            int p;
            do {
                p = HubProcess.freePort();
            } while (!taken.add(p));
            ports.put(id, p);
        }
        // 4. start the hubs
        Map<String, HubProcess> procs = new LinkedHashMap<>();
        for (Hub h : hubs.values()) {
            procs.put(h.id(), keep(new HubProcess(h.id(), ports.get(h.id()), dir.resolve(h.id() + ".log"),
                    args(h, hubs, ports))));
        }
        for (HubProcess p : procs.values()) {
            p.start();
        }
        for (HubProcess p : procs.values()) {
            p.awaitHealthy();
        }
        HubProcess a = procs.get("hub-a");
        HubProcess b = procs.get("hub-b");
        HubProcess c = procs.get("hub-c");

        // INV-MH-1: claimed on hub-a in proj, decided (and held) on hub-b only
        HubClient alice = keep(agent(a, hubs.get("hub-a"), "proj/alice"));
        ObjectNode granted = claim(alice, "proj/alice", "T-1", "src/x");
        assertThat(granted.path("type").asText()).as(granted.toString() + "\n" + a.logTail()).isEqualTo("claim_granted");
        assertThat(granted.path("owner").asText()).isEqualTo("proj/alice");
        HubClient bob = keep(agent(c, hubs.get("hub-c"), "proj/bob"));
        ObjectNode refused = claim(bob, "proj/bob", "T-1", "src/x");
        assertThat(refused.path("type").asText()).as(refused.toString()).isEqualTo("claim_denied");
        assertThat(refused.path("owner_hub_id").asText()).isEqualTo("hub-b");
        assertThat(refused.path("namespace").asText()).isEqualTo("proj");
        assertThat(sample(b.metrics(), "synapse_active_claims")).isEqualTo(1);
        assertThat(sample(b.metrics(), "synapse_peer_claims_decided_total")).isEqualTo(2);
        assertThat(sample(a.metrics(), "synapse_active_claims")).isZero();
        assertThat(sample(a.metrics(), "synapse_forwarded_claims_granted_total")).isEqualTo(1);
        assertThat(sample(c.metrics(), "synapse_forwarded_claims_denied_total")).isEqualTo(1);

        // INV-MH-2: hub-c observes hub-b's grant, tagged with hub-b, and holds nothing itself
        HubClient reader = keep(agent(c, hubs.get("hub-c"), "ops/reader"));
        JsonNode seen = awaitObserved(reader, "hub-b", view -> claimOf(view, "T-1") != null);
        assertThat(claimOf(seen, "T-1").path("owner").asText()).isEqualTo("proj/alice");
        assertThat(claimOf(seen, "T-1").path("observed_on").asText()).isEqualTo("hub-b");
        assertThat(claimOf(seen, "T-1").path("live").asBoolean()).isTrue();
        assertThat(sample(c.metrics(), "synapse_active_claims")).isZero();

        // INV-CR-4: the owner is gone; a forwarded claim is refused, never granted, and nothing is held here
        b.kill();
        HubClient dave = keep(agent(a, hubs.get("hub-a"), "proj/dave"));
        ObjectNode whileDown = claim(dave, "proj/dave", "T-2", "src/y");
        assertThat(whileDown.path("type").asText()).as(whileDown.toString()).isEqualTo("claim_denied");
        assertThat(whileDown.path("ownership").asText()).isEqualTo("remote");
        assertThat(whileDown.path("owner_hub_id").asText()).isEqualTo("hub-b");
        assertThat(sample(a.metrics(), "synapse_active_claims")).isZero();
        assertThat(sum(a.metrics(), "synapse_forwarded_claim_outcomes_total{owner=\"hub-b\",outcome=\"granted\"}"))
                .isEqualTo(1);
        assertThat(sum(a.metrics(), "synapse_forwarded_claim_outcomes_total{owner=\"hub-b\",outcome=\"transport_failure\"}")
                + sum(a.metrics(), "synapse_forwarded_claim_outcomes_total{owner=\"hub-b\",outcome=\"timeout\"}"))
                .isEqualTo(1);
        // the observer's poll of hub-b fails, is counted, and its last observation stays
        JsonNode failing = awaitObserved(reader, "hub-b", view -> !view.path("last_error").isNull());
        assertThat(claimOf(failing, "T-1")).as(failing.toString()).isNotNull();
        assertThat(sum(c.metrics(), "synapse_multihub_peer_observation_errors_total{peer=\"hub-b\",")).isPositive();

        // restart: hub-b is back on its journal, still holds T-1, and forwarding and observation recover
        b.start().awaitHealthy();
        ObjectNode afterRestart = claimUntilGranted(dave, "proj/dave", "T-2", "src/y");
        assertThat(afterRestart.path("owner").asText()).isEqualTo("proj/dave");
        assertThat(claim(bob, "proj/bob", "T-1", "src/x").path("type").asText()).isEqualTo("claim_denied");
        assertThat(sample(b.metrics(), "synapse_active_claims")).isEqualTo(2);
        assertThat(sample(a.metrics(), "synapse_active_claims")).isZero();
        JsonNode healed = awaitObserved(reader, "hub-b",
                view -> view.path("last_error").isNull() && claimOf(view, "T-2") != null);
        assertThat(claimOf(healed, "T-1").path("owner").asText()).isEqualTo("proj/alice");
        assertThat(healed.path("quarantined").asBoolean()).isFalse(); // the same log re-read: no equivocation
    }

    /** The hub's flags, as step 4 of docs/federation.md builds them (watch interval 1 s, the floor). */
    private static List<String> args(Hub h, Map<String, Hub> hubs, Map<String, Integer> ports) {
        Path d = h.dir();
        List<String> args = new ArrayList<>(List.of("--db", d.resolve("hub.db").toString(), "--hub-id", h.id(),
                "--tls-certfile", d.resolve("server.pem").toString(), "--tls-keyfile", d.resolve("server.key").toString(),
                "--multihub-serving-policy", d.resolve("serving-policy.json").toString(),
                "--multihub-client-certfile", d.resolve("client.pem").toString(),
                "--multihub-client-keyfile", d.resolve("client.key").toString(),
                "--multihub-watch-interval", "1"));
        OWNERS.forEach((ns, owner) -> args.addAll(List.of("--namespace-owner", ns + "=" + owner)));
        for (Hub peer : hubs.values()) {
            if (peer == h) {
                continue;
            }
            String url = "wss://127.0.0.1:" + ports.get(peer.id());
            args.addAll(List.of("--claim-peer", peer.id() + "=" + url, "--claim-peer-pin", peer.id() + "=" + peer.pin(),
                    "--multihub-watch", peer.id() + "=" + url, "--multihub-watch-pin", peer.id() + "=" + peer.pin()));
        }
        return args;
    }

    /** An agent registered on {@code hub} as {@code name}, trusting the hub by its pin. */
    private static HubClient agent(HubProcess hub, Hub identity, String name) throws Exception {
        HubClient c = HubClient.connect(URI.create(hub.url()), WAIT, ClientTls.pinned(identity.server().pin()));
        c.register(name, null, WAIT);
        return c;
    }

    /** Claims {@code task} and returns the reply: claim_granted to {@code name}, or claim_denied. */
    static ObjectNode claim(HubClient agent, String name, String task, String... paths) throws TimeoutException {
        ObjectNode f = agent.frame(name, "claim");
        f.put("task_id", task);
        var p = f.putArray("paths");
        for (String s : paths) {
            p.add(s);
        }
        agent.send(f);
        return agent.await(r -> task.equals(r.path("task_id").asText())
                && ("claim_granted".equals(r.path("type").asText()) && name.equals(r.path("owner").asText())
                || "claim_denied".equals(r.path("type").asText())), WAIT);
    }

    /** Repeats the claim until it is granted (the forwarder reconnects to a restarted owner), within {@link #WAIT}. */
    private static ObjectNode claimUntilGranted(HubClient agent, String name, String task, String... paths)
            throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        ObjectNode last = null;
        while (System.nanoTime() < deadline) {
            last = claim(agent, name, task, paths);
            if ("claim_granted".equals(last.path("type").asText())) {
                return last;
            }
            assertThat(last.path("ownership").asText()).as(last.toString()).isEqualTo("remote"); // still failing closed
            TimeUnit.MILLISECONDS.sleep(200); // a pause between retries, not a wait for an outcome
        }
        throw new AssertionError("the forwarded claim was not granted within " + WAIT + "; last reply " + last);
    }

    /** Asks for the advisory view until {@code peer}'s entry satisfies {@code condition}; returns that entry. */
    private static JsonNode awaitObserved(HubClient reader, String peer, Predicate<JsonNode> condition) throws Exception {
        long deadline = System.nanoTime() + OBSERVE.toNanos();
        JsonNode last = null;
        while (System.nanoTime() < deadline) {
            reader.send(reader.frame("ops/reader", "multihub_observed_request"));
            ObjectNode observed = reader.awaitType("multihub_observed", WAIT);
            assertThat(observed.path("advisory").asBoolean()).isTrue();
            for (JsonNode v : observed.path("peers")) {
                if (peer.equals(v.path("peer").asText())) {
                    last = v;
                }
            }
            if (last != null && condition.test(last)) {
                return last;
            }
            TimeUnit.MILLISECONDS.sleep(200); // a pause between queries, not a wait for an outcome
        }
        throw new AssertionError("the advisory view of " + peer + " never matched within " + OBSERVE + "; last " + last);
    }

    private static JsonNode claimOf(JsonNode view, String task) {
        for (JsonNode c : view.path("claims")) {
            if (task.equals(c.path("task_id").asText())) {
                return c;
            }
        }
        return null;
    }

    /** The sum of the samples whose name and labels start with {@code prefix} (0 when there is none). */
    static double sum(String metrics, String prefix) {
        double total = 0;
        for (String line : metrics.split("\n")) {
            if (line.startsWith(prefix)) {
                total += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return total;
    }

    /** The value of the unlabelled sample {@code name} in a Prometheus text body. */
    static double sample(String metrics, String name) {
        for (String line : metrics.split("\n")) {
            if (line.startsWith(name + " ")) {
                return Double.parseDouble(line.substring(name.length() + 1).trim());
            }
        }
        throw new AssertionError("no sample " + name + " in\n" + metrics);
    }
}
