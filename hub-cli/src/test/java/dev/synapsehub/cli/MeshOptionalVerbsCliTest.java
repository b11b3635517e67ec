package dev.synapsehub.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A mesh is one hub to its clients: every optional verb of contract §14 that a standalone hub
 * answers gets the same answer from every node of a mesh started with the same flags (served, or
 * the contract's "not available" answer), never "Unknown message type". Each verb is sent to all
 * three nodes, so at least two of them answer as followers (forwarding what they journal).
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class MeshOptionalVerbsCliTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final String TOKEN = "s3cret-token";
    /** Members that differ between two hubs for the same answer: when, which message, which journal seq. */
    private static final List<String> VOLATILE = List.of("timestamp", "msg_id", "audit_seq", "seq");

    @TempDir
    Path dir;
    private final List<LoopbackHub> hubs = new CopyOnWriteArrayList<>();

    @AfterEach
    void stop() throws Exception {
        for (LoopbackHub h : hubs) {
            h.close();
        }
    }

    /** One §14 verb as an agent sends it (null answer expected: fire-and-forget). */
    private record Probe(String type, Function<String, ObjectNode> frame, boolean answered) {
    }

    @Test
    void everyOptionalVerbIsAnsweredOnEveryMeshNodeAsOnAStandaloneHub() throws Exception {
        answeredAlikeOnEveryNode(List.of(), MeshOptionalVerbsCliTest::probes);
    }

    @Test
    void everyMeshNodeServesTheFederationOfferAsAStandaloneHubDoes() throws Exception {
        Path offer = dir.resolve("offer.json");
        java.nio.file.Files.writeString(offer, "{\"domain_id\":\" m.example \",\"namespaces\":[\"proj\",\"ops\"],"
                + "\"certificate_pins\":[\"sha256:" + "ab".repeat(32) + "\"],\"signing_key_ids\":[\"k2\",\"k1\"],"
                + "\"scope_grants\":[{\"verb\":\"claim\",\"namespace\":\"proj\"}],\"expires_at\":1900000000}");
        List<Map<String, List<ObjectNode>>> answers = answeredAlikeOnEveryNode(
                List.of("--federation-offer", offer.toString()),
                channel -> List.of(new Probe("federation_offer_request", n -> frame(n, "federation_offer_request"), true)));
        ObjectNode served = answers.get(0).get("federation_offer_request").get(0);
        assertThat(served.path("type").asText()).as(served.toString()).isEqualTo("federation_offer");
        assertThat(served.path("domain_id").asText()).isEqualTo("m.example");
    }

    /**
     * Starts a standalone hub and a three-node mesh with the same {@code flags}, sends each probe
     * to every node and to the standalone hub (as the same agent name), and asserts the answers are
     * equal; returns each node's answers.
     */
    private List<Map<String, List<ObjectNode>>> answeredAlikeOnEveryNode(
            List<String> flags, Function<String, List<Probe>> probes) throws Exception {
        LoopbackHub single = new LoopbackHub();
        hubs.add(single);
        List<String> args = new ArrayList<>(List.of("--port", "0", "--db", dir.resolve("single.db").toString(),
                "--hub-id", "hub-x", "--token", TOKEN));
        args.addAll(flags);
        single.start(args.toArray(String[]::new));
        List<String> meshFlags = new ArrayList<>(List.of("--hub-id", "hub-x", "--token", TOKEN));
        meshFlags.addAll(flags);
        List<HubDaemon> nodes = MeshNodes.start(hubs, dir, meshFlags);

        List<Map<String, List<ObjectNode>>> all = new ArrayList<>();
        for (int i = 0; i < nodes.size(); i++) {
            String name = "proj/agent-" + (i + 1);
            List<Probe> sent = probes.apply("c" + (i + 1));
            Map<String, List<ObjectNode>> expected = answers(URI.create(single.url()), name, sent);
            Map<String, List<ObjectNode>> actual = answers(URI.create("ws://127.0.0.1:" + nodes.get(i).port()), name,
                    sent);
            for (Map.Entry<String, List<ObjectNode>> verb : expected.entrySet()) {
                assertThat(actual.get(verb.getKey())).as("node n%d's answer to %s", i + 1, verb.getKey())
                        .isEqualTo(verb.getValue());
            }
            all.add(actual);
        }
        return all;
    }

    /** Each probe's private answers on {@code hub}, volatile members removed. */
    private Map<String, List<ObjectNode>> answers(URI hub, String name, List<Probe> probes) throws Exception {
        Map<String, List<ObjectNode>> out = new LinkedHashMap<>();
        try (HubClient agent = HubClient.connect(hub, WAIT)) {
            agent.register(name, TOKEN, WAIT);
            for (Probe p : probes) {
                agent.clearPending();
                agent.send(p.frame().apply(name));
                List<ObjectNode> answer = new ArrayList<>();
                if (p.answered()) {
                    answer.add(agent.await(f -> name.equals(f.path("target").asText()), WAIT));
                } else {
                    // nothing comes back: a marker's reply is the first private frame after it
                    agent.send(frame(name, "channel_list_request"));
                    ObjectNode first = agent.await(f -> name.equals(f.path("target").asText()), WAIT);
                    if (!"channel_list".equals(first.path("type").asText())) {
                        answer.add(first);
                    }
                }
                for (ObjectNode f : answer) {
                    VOLATILE.forEach(f::remove);
                }
                out.put(p.type(), answer);
            }
        }
        return out;
    }

    private static List<Probe> probes(String channel) {
        return List.of(
                new Probe("recall_log", n -> frame(n, "recall_log").put("query_text", "where is T1"), true),
                new Probe("finding", n -> frame(n, "finding"), true),
                new Probe("channel_create", n -> frame(n, "channel_create").put("channel", channel), true),
                new Probe("channel_invite", n -> frame(n, "channel_invite").put("channel", channel)
                        .put("invitee", "proj/nobody"), true),
                new Probe("channel_join", n -> frame(n, "channel_join").put("channel", "none-" + channel), true),
                new Probe("channel_list_request", n -> frame(n, "channel_list_request"), true),
                new Probe("channel_history_request", n -> frame(n, "channel_history_request").put("channel", channel),
                        true),
                new Probe("channel_leave", n -> frame(n, "channel_leave").put("channel", channel), true),
                new Probe("operator_relay_request", n -> frame(n, "operator_relay_request").put("action", "release")
                        .put("namespace", "proj").put("task_id", "T1").put("operator", "ops")
                        .put("origin_hub_id", "hub-o"), true),
                new Probe("federation_offer_request", n -> frame(n, "federation_offer_request"), true),
                new Probe("identity_pin_reclaim", n -> frame(n, "identity_pin_reclaim").put("pin_name", "proj/ghost"),
                        true),
                new Probe("guard_denial", n -> frame(n, "guard_denial").put("reason_code", "GUARD_NO_CLAIM")
                        .put("provider", "shell").put("path_count", 1).put("actor_sha256", "a".repeat(64))
                        .put("call_sha256", "b".repeat(64)).put("scope_sha256", "c".repeat(64)), true),
                new Probe("dead_letter_forwarding", n -> {
                    ObjectNode f = frame(n, "dead_letter_forwarding");
                    f.putObject("forwarding").put("target", "proj/ghost").put("count", 2).put("origin_hub_id", n);
                    return f;
                }, false),
                new Probe("multihub_log_request", n -> frame(n, "multihub_log_request").put("after_seq", 0)
                        .put("limit", 10), true),
                new Probe("multihub_claim_request", n -> frame(n, "multihub_claim_request").put("namespace", "proj")
                        .put("task_id", "T9").put("claimant", "proj/z"), true));
    }

    private static ObjectNode frame(String sender, String type) {
        return HubClient.requestFrame(sender, type);
    }
}
