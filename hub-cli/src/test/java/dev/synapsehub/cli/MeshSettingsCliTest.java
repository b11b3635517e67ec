package dev.synapsehub.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
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
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import static dev.synapsehub.cli.CliTest.run;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The nodes of a mesh check that they were started with the same governance flags (docs/mesh.md,
 * "Nodes agree on their governance settings"): a node whose ownership map differs from the
 * leader's reports it on /health, /metrics and {@code mesh status}, refuses claims, and clears
 * once restarted with the right flags; the nodes that agree report nothing.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class MeshSettingsCliTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final List<String> COMMON = List.of("--hub-id", "hub-m", "--metrics");
    private static final List<String> RIGHT = List.of("--namespace-owner", "proj=hub-m");
    private static final List<String> WRONG = List.of("--namespace-owner", "proj=hub-m", "--namespace-owner", "lab=hub-a");

    @TempDir
    Path dir;
    private final List<LoopbackHub> hubs = new CopyOnWriteArrayList<>();
    private String peers;

    @AfterEach
    void stop() throws Exception {
        for (LoopbackHub h : hubs) {
            h.close();
        }
    }

    @Test
    void aNodeWithADifferentOwnershipMapIsReportedMismatchedUntilRestartedWithTheRightFlags() throws Exception {
        peers = "n1=127.0.0.1:" + HubProcess.freePort() + ",n2=127.0.0.1:" + HubProcess.freePort()
                + ",n3=127.0.0.1:" + HubProcess.freePort();
        // n1 and n2 first (a quorum: one of them leads, the reference), then n3 with one owner more
        List<LoopbackHub> pair = startTogether(List.of("n1", "n2"), RIGHT);
        LoopbackHub n1 = pair.get(0);
        LoopbackHub n2 = pair.get(1);
        LoopbackHub n3 = start("n3", WRONG);

        JsonNode health3 = awaitHealth(n3, h -> h.path("reasons").toString().contains("mesh_settings_mismatch"));
        assertThat(health3.path("status").asText()).as(health3.toString()).isEqualTo("degraded");
        assertThat(gauge(n3)).isEqualTo(1);
        for (LoopbackHub agreeing : List.of(n1, n2)) {
            JsonNode h = health(agreeing);
            assertThat(h.path("reasons").toString()).as(h.toString()).doesNotContain("mesh_settings_mismatch");
            assertThat(gauge(agreeing)).isZero();
        }

        JsonNode status = status();
        JsonNode settings = status.path("settings");
        assertThat(status.path("settings_mismatch").asBoolean()).as(status.toString()).isTrue();
        assertThat(settings.path("n3").path("state").asText()).as(settings.toString()).isEqualTo("mismatch");
        assertThat(settings.path("n3").path("differing")).as(settings.toString()).hasSize(1);
        assertThat(settings.path("n3").path("differing").get(0).asText()).isEqualTo("namespace_owner");
        assertThat(settings.path("n1").path("state").asText()).as(settings.toString()).isEqualTo("agree");
        assertThat(settings.path("n2").path("state").asText()).as(settings.toString()).isEqualTo("agree");
        assertThat(settings.path("n1").path("fingerprint").asText()).startsWith("sha256:")
                .isEqualTo(settings.path("n2").path("fingerprint").asText())
                .isNotEqualTo(settings.path("n3").path("fingerprint").asText());
        CliTest.Run text = run("mesh", "status", "--mesh-peers", peers, "--timeout", "10");
        assertThat(text.out()).as(text.out()).containsPattern("n3 .*MISMATCH with n[12] \\(namespace_owner\\)");

        // fail closed: the mismatched node decides no claim; an agreeing one does
        try (HubClient alice = agent(n3, "proj/alice"); HubClient bob = agent(n1, "proj/bob")) {
            ObjectNode refused = FederationProcessTest.claim(alice, "proj/alice", "T-1", "src/a");
            assertThat(refused.path("type").asText()).as(refused.toString()).isEqualTo("claim_denied");
            assertThat(refused.path("mesh_reason").asText()).isEqualTo("mesh_settings_mismatch");
            assertThat(refused.path("reason_code").asText()).isEqualTo("CLAIM_DENIED");
            ObjectNode granted = FederationProcessTest.claim(bob, "proj/bob", "T-2", "src/b");
            assertThat(granted.path("type").asText()).as(granted.toString()).isEqualTo("claim_granted");
        }
        assertThat(metric(n3, "synapse_mesh_settings_refused_claims_total")).isEqualTo(1);
        // checked about every second since, but one mismatch: counted (and logged at ERROR) once
        assertThat(metric(n3, "synapse_mesh_settings_mismatches_total")).isEqualTo(1);

        // a keyed claim granted through n1 and retried through the mismatched n3 gets its first answer (INV-CR-1):
        // the replicated ledger answers it, only new decisions are refused
        try (HubClient erin = agent(n3, "proj/erin")) {
            try (HubClient dave = agent(n1, "proj/dave")) {
                ObjectNode first = keyedClaim(dave, "proj/dave", "T-K", "k-1");
                assertThat(first.path("type").asText()).as(first.toString()).isEqualTo("claim_granted");
            }
            // n3 has applied the grant (and broadcast it) before dave connects there: what dave gets is the answer
            erin.await(r -> "claim_granted".equals(r.path("type").asText()) && "T-K".equals(r.path("task_id").asText()),
                    WAIT);
        }
        try (HubClient dave = agent(n3, "proj/dave")) {
            ObjectNode again = keyedClaim(dave, "proj/dave", "T-K", "k-1");
            assertThat(again.path("type").asText()).as(again.toString()).isEqualTo("claim_granted");
            assertThat(again.path("task_id").asText()).isEqualTo("T-K");
            assertThat(again.path("owner").asText()).isEqualTo("proj/dave");
            // and a new keyed claim through n3 is still refused
            ObjectNode fresh = keyedClaim(dave, "proj/dave", "T-N", "k-2");
            assertThat(fresh.path("type").asText()).as(fresh.toString()).isEqualTo("claim_denied");
            assertThat(fresh.path("mesh_reason").asText()).isEqualTo("mesh_settings_mismatch");
        }

        // restarted with the leader's flags, n3 agrees: nothing is reported any more, and it decides again
        n3.close();
        hubs.remove(n3);
        LoopbackHub again = start("n3", RIGHT);
        awaitHealth(again, h -> "agree".equals(statusOf("n3")) && !h.path("reasons").toString()
                .contains("mesh_settings_mismatch"));
        assertThat(gauge(again)).isZero();
        JsonNode after = status();
        assertThat(after.path("settings_mismatch").asBoolean()).as(after.toString()).isFalse();
        try (HubClient carol = agent(again, "proj/carol")) {
            ObjectNode granted = FederationProcessTest.claim(carol, "proj/carol", "T-3", "src/c");
            assertThat(granted.path("type").asText()).as(granted.toString()).isEqualTo("claim_granted");
        }
    }

    @Test
    void aMismatchWithoutAnOwnershipMapIsReportedButClaimsAreStillDecided() throws Exception {
        peers = "n1=127.0.0.1:" + HubProcess.freePort() + ",n2=127.0.0.1:" + HubProcess.freePort()
                + ",n3=127.0.0.1:" + HubProcess.freePort();
        List<LoopbackHub> pair = startTogether(List.of("n1", "n2"), List.of());
        // the consume-liveness flags too: n3 would judge its agents' chats' recipients live by other rules
        LoopbackHub n3 = start("n3", List.of("--default-delivery", "scoped", "--no-warn-stale-recipients",
                "--recipient-liveness-window", "45", "--waiter-liveness-window", "30"));

        JsonNode health3 = awaitHealth(n3, h -> h.path("reasons").toString().contains("mesh_settings_mismatch"));
        assertThat(health3.path("status").asText()).as(health3.toString()).isEqualTo("degraded");
        assertThat(gauge(pair.get(0))).isZero();
        JsonNode n3Settings = status().path("settings").path("n3");
        assertThat(n3Settings.path("differing").toString()).as(n3Settings.toString()).isEqualTo(
                "[\"default_delivery\",\"recipient_liveness_window\",\"waiter_liveness_window\",\"warn_stale_recipients\"]");

        // no ownership map on either side: the leader decides claims by its own flags, so n3 still takes them
        try (HubClient alice = agent(n3, "proj/alice")) {
            ObjectNode granted = FederationProcessTest.claim(alice, "proj/alice", "T-1", "src/a");
            assertThat(granted.path("type").asText()).as(granted.toString()).isEqualTo("claim_granted");
        }
        assertThat(metric(n3, "synapse_mesh_settings_refused_claims_total")).isZero();
    }

    private static ObjectNode keyedClaim(HubClient agent, String name, String task, String key) throws Exception {
        ObjectNode f = agent.frame(name, "claim");
        f.put("task_id", task);
        f.putArray("paths").add("src/" + task);
        f.put("idem_key", key);
        agent.send(f);
        return agent.await(r -> task.equals(r.path("task_id").asText())
                && ("claim_granted".equals(r.path("type").asText()) || "claim_denied".equals(r.path("type").asText())),
                WAIT);
    }

    private LoopbackHub start(String id, List<String> flags) throws Exception {
        LoopbackHub hub = new LoopbackHub();
        hubs.add(hub);
        List<String> args = new ArrayList<>(List.of("--port", "0", "--db", dir.resolve(id + ".db").toString(),
                "--mesh-id", id, "--mesh-peers", peers, "--mesh-bootstrap"));
        args.addAll(COMMON);
        args.addAll(flags);
        hub.start(args.toArray(String[]::new));
        return hub;
    }

    /** Starts {@code ids} at once (each waits for a leader, which needs the others). */
    private List<LoopbackHub> startTogether(List<String> ids, List<String> flags) throws Exception {
        List<Callable<LoopbackHub>> starts = new ArrayList<>();
        for (String id : ids) {
            starts.add(() -> start(id, flags));
        }
        return MeshNodes.together(starts);
    }

    private JsonNode status() throws Exception {
        CliTest.Run r = run("mesh", "status", "--mesh-peers", peers, "--json", "--timeout", "10");
        assertThat(r.code()).as(r.err()).isEqualTo(ExitCodes.OK);
        return JSON.readTree(r.out());
    }

    private String statusOf(String node) {
        try {
            return status().path("settings").path(node).path("state").asText();
        } catch (Exception | AssertionError e) {
            return null;
        }
    }

    private static HubClient agent(LoopbackHub hub, String name) throws Exception {
        HubClient c = HubClient.connect(URI.create(hub.url()), WAIT);
        c.register(name, null, WAIT);
        return c;
    }

    /** Polls /health until {@code condition} holds, at most {@link #WAIT}; the last answer either way. */
    private static JsonNode awaitHealth(LoopbackHub hub, Predicate<JsonNode> condition) throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        JsonNode last = health(hub);
        while (!condition.test(last) && System.nanoTime() < deadline) {
            TimeUnit.MILLISECONDS.sleep(200); // polling for a state the node reaches on its own check
            last = health(hub);
        }
        assertThat(condition.test(last)).as(last.toString()).isTrue();
        return last;
    }

    private static JsonNode health(LoopbackHub hub) throws Exception {
        return JSON.readTree(get(hub, "/health"));
    }

    private static double gauge(LoopbackHub hub) throws Exception {
        return metric(hub, "synapse_mesh_settings_mismatch");
    }

    private static double metric(LoopbackHub hub, String name) throws Exception {
        for (String line : get(hub, "/metrics").split("\n")) {
            if (line.startsWith(name + " ")) {
                return Double.parseDouble(line.substring(name.length() + 1).trim());
            }
        }
        throw new AssertionError(name + " is not on /metrics");
    }

    private static String get(LoopbackHub hub, String path) throws Exception {
        String port = hub.url().substring(hub.url().lastIndexOf(':') + 1);
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + port + path)).timeout(WAIT).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        return r.body();
    }
}
