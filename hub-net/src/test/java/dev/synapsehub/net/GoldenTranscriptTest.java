package dev.synapsehub.net;

import dev.synapsehub.client.HubClient;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Replays the client frames of the reference transcript (claim, release, handoff, checkpoint,
 * task_update, state, who, presence, name conflict flows) against our hub and compares every
 * recorded reply field by field: same frame types per connection, same member names in the
 * same order, same JSON types, same values except what legitimately differs (hub_id,
 * timestamps, seq, payload text, absolute epochs, lease times compared as TTLs).
 */
class GoldenTranscriptTest {
    /** A copy of shared/transcripts/reference-v2.jsonl, kept with the tests so every checkout has it. */
    private static final Path TRANSCRIPT = Path.of("src/test/resources/transcripts/reference-v2.jsonl");
    private static final Set<String> IGNORED_VALUES = Set.of("hub_id", "timestamp", "seq", "msg_id", "payload",
            "epoch", "lease_expires_at", "claimed_at", "last_seen", "generated_at", "last_reaction_age", "config_epoch",
            "hub_version", "posted_at", "agents", "mailbox_pending", "client_timestamp", "message_id", "message_seq",
            "receipt_notification_id");
    /** Flows using chat or the mailbox run against a journaled hub (seq, mailbox, deferred receipts). */
    private static final Set<String> JOURNALED_VERBS = Set.of("chat", "ack");
    private static final Duration WAIT = Duration.ofSeconds(5);
    private final ObjectMapper mapper = new ObjectMapper();

    @TestFactory
    Stream<DynamicTest> referenceFlows() throws Exception {
        assertThat(TRANSCRIPT).as("the recorded reference transcript").isRegularFile();
        Map<String, List<JsonNode>> flows = new LinkedHashMap<>();
        List<JsonNode> current = null;
        for (String line : Files.readAllLines(TRANSCRIPT)) {
            JsonNode o = mapper.readTree(line);
            if ("mark".equals(o.path("event").asText())) {
                current = new ArrayList<>();
                flows.put(o.path("name").asText(), current);
            } else if (current != null) {
                current.add(o);
            }
        }
        List<DynamicTest> tests = new ArrayList<>();
        flows.forEach((name, lines) -> {
            boolean chatty = lines.stream().anyMatch(l -> "c>h".equals(l.path("dir").asText())
                    && JOURNALED_VERBS.contains(l.path("frame").path("type").asText()));
            if (!name.startsWith("durable_restart") && !name.startsWith("js-client")) {
                tests.add(DynamicTest.dynamicTest(name, () -> replay(lines, chatty)));
            }
        });
        assertThat(tests).hasSizeGreaterThanOrEqualTo(19);
        return tests.stream();
    }

    private void replay(List<JsonNode> lines, boolean journaled) throws Exception {
        Path dir = journaled ? Files.createTempDirectory("golden") : null;
        try (TestHub hub = journaled ? TestHub.journaled(dir.resolve("hub.db")) : TestHub.open()) {
            Map<Integer, HubClient> conns = new HashMap<>();
            Map<String, Integer> connOfAgent = new HashMap<>();
            Map<Integer, List<String>> expectedTypes = new HashMap<>();
            Map<Integer, List<String>> actualTypes = new HashMap<>();
            Map<Long, Long> seqs = new HashMap<>(); // recorded journal seq -> ours (acks and since_seq refer to them)
            for (JsonNode l : lines) {
                int conn = l.path("conn").asInt();
                String event = l.path("event").asText();
                if ("open".equals(event)) {
                    // Connected on first use: the recorder logs "open" when the client reached its
                    // proxy, which may be before the hub saw the socket; connecting eagerly would let
                    // a broadcast reach a socket the reference hub did not yet have.
                    continue;
                } else if ("close".equals(event)) {
                    HubClient c = l.path("h>c").path("code").asInt(0) >= 4000
                            ? connection(conns, hub, conn) : conns.get(conn);
                    int code = l.path("h>c").path("code").asInt(0);
                    if (code >= 4000) {
                        // The hub stops counting a socket it closes at once (no wait needed here).
                        assertThat(c.awaitClose(WAIT).code()).isEqualTo(code);
                        assertThat(c.awaitClose(WAIT).reason()).isEqualTo(l.path("h>c").path("reason").asText());
                    } else if (c != null && c.isOpen()) {
                        // a connection closed earlier (its agent's "left" was expected) is already
                        // uncounted: waiting for the count to drop again would only run out the clock
                        int before = hub.server.services().registry().connectedClients();
                        c.close();
                        awaitConnectionCountBelow(hub, before);
                        // the count drops before the close hands on its "left": let that go out to
                        // the sockets there are now, not to the next one the flow opens
                        hub.server.awaitLoopsPassed(WAIT);
                        hub.awaitBroadcastsHandedOut();
                    }
                } else if ("c>h".equals(l.path("dir").asText())) {
                    JsonNode frame = l.path("frame");
                    connOfAgent.putIfAbsent(frame.path("sender").asText(), conn);
                    connection(conns, hub, conn).sendText(translateSeqs(l.path("raw").asText(), seqs));
                } else if ("h>c".equals(l.path("dir").asText())) {
                    ObjectNode expected = (ObjectNode) mapper.readTree(l.path("raw").asText());
                    String type = expected.path("type").asText();
                    if ("presence_update".equals(type) && "left".equals(expected.path("event").asText())) {
                        Integer leaver = connOfAgent.get(expected.path("agent").asText());
                        if (leaver != null && conns.get(leaver).isOpen()) {
                            conns.get(leaver).close();
                        }
                    }
                    expectedTypes.computeIfAbsent(conn, k -> new ArrayList<>()).add(type);
                    String task = expected.path("task_id").asText(null);
                    String agent = expected.path("agent").asText(null);
                    ObjectNode actual = connection(conns, hub, conn).await(f -> type.equals(f.path("type").asText())
                            && (task == null || task.equals(f.path("task_id").asText()))
                            && (agent == null || agent.equals(f.path("agent").asText())), WAIT);
                    actualTypes.computeIfAbsent(conn, k -> new ArrayList<>()).add(type);
                    if (expected.has("seq") && actual.has("seq")) {
                        seqs.put(expected.get("seq").asLong(), actual.get("seq").asLong());
                    }
                    compare(type, expected, actual);
                }
            }
            // a lingering broadcast must not escape the leftovers check (then a margin to read it)
            hub.awaitBroadcastsHandedOut();
            Thread.sleep(50);
            for (Map.Entry<Integer, HubClient> e : conns.entrySet()) {
                List<String> leftovers = new ArrayList<>();
                e.getValue().pending().stream()
                        // our own end-of-flow closes produce "left" frames the recorder logged in the next flow
                        .filter(f -> !"left".equals(f.path("event").asText()))
                        .forEach(f -> leftovers.add(f.path("type").asText()));
                assertThat(leftovers).as("unrecorded frames on conn %d", e.getKey()).isEmpty();
            }
        }
    }

    /** Rewrites a client frame's {@code seq} / {@code since_seq} from the recorded hub's numbering to ours. */
    private String translateSeqs(String raw, Map<Long, Long> seqs) throws Exception {
        JsonNode node = mapper.readTree(raw);
        if (!node.isObject()) {
            return raw;
        }
        boolean changed = false;
        for (String field : List.of("seq", "since_seq")) {
            JsonNode v = node.get(field);
            if (v != null && v.isIntegralNumber() && seqs.containsKey(v.asLong())) {
                ((ObjectNode) node).put(field, seqs.get(v.asLong()));
                changed = true;
            }
        }
        return changed ? mapper.writeValueAsString(node) : raw;
    }

    private static HubClient connection(Map<Integer, HubClient> conns, TestHub hub, int conn) throws Exception {
        HubClient c = conns.get(conn);
        if (c == null) {
            c = hub.connect();
            conns.put(conn, c);
        }
        return c;
    }

    /** A client-side close reaches the hub asynchronously; later snapshots must not count it. */
    private static void awaitConnectionCountBelow(TestHub hub, int before) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (hub.server.services().registry().connectedClients() >= before) {
            // a close the hub never counts off is a failure, not a pause to sit out
            assertThat(System.nanoTime() - deadline).as("the hub counted off a closed connection within %s", WAIT)
                    .isNegative();
            Thread.sleep(2);
        }
    }

    private static void compare(String path, JsonNode expected, JsonNode actual) {
        assertThat(actual.getNodeType()).as("JSON type of %s", path).isEqualTo(expected.getNodeType());
        if (expected.isNumber()) {
            assertThat(actual.isIntegralNumber()).as("int/float kind of %s", path)
                    .isEqualTo(expected.isIntegralNumber());
        }
        if (expected.isObject()) {
            List<String> ek = new ArrayList<>();
            expected.fieldNames().forEachRemaining(ek::add);
            List<String> ak = new ArrayList<>();
            actual.fieldNames().forEachRemaining(ak::add);
            if (path.endsWith("agent_liveness") || path.endsWith("mailbox_pending")) {
                return;
            }
            assertThat(ak).as("members of %s", path).isEqualTo(ek);
            for (Iterator<String> it = expected.fieldNames(); it.hasNext(); ) {
                String k = it.next();
                JsonNode e = expected.get(k);
                JsonNode a = actual.get(k);
                if ("mailbox_pending".equals(k)) {
                    continue; // null without a journal (documented)
                }
                if (IGNORED_VALUES.contains(k)) {
                    if (!e.isNull()) {
                        assertThat(a.getNodeType()).as("JSON type of %s.%s", path, k).isEqualTo(e.getNodeType());
                    }
                    continue;
                }
                compare(path + "." + k, e, a);
            }
            leaseAsTtl(path, expected, actual);
        } else if (expected.isArray()) {
            if (!path.endsWith("active_claims") && !path.endsWith("online_agents")) {
                assertThat(actual.size()).as("size of %s", path).isEqualTo(expected.size());
            }
            assertThat(actual.size()).as("size of %s", path).isEqualTo(expected.size());
            for (int i = 0; i < expected.size(); i++) {
                compare(path + "[" + i + "]", expected.get(i), actual.get(i));
            }
        } else {
            assertThat(actual).as("value of %s", path).isEqualTo(expected);
        }
    }

    private static void leaseAsTtl(String path, JsonNode expected, JsonNode actual) {
        if (!expected.has("lease_expires_at")) {
            return;
        }
        String base = expected.has("claimed_at") ? "claimed_at" : "timestamp";
        if (!expected.has(base)) {
            return;
        }
        double expectedTtl = expected.get("lease_expires_at").asDouble() - expected.get(base).asDouble();
        double actualTtl = actual.get("lease_expires_at").asDouble() - actual.get(base).asDouble();
        assertThat(actualTtl).as("lease TTL of %s", path).isBetween(expectedTtl - 2.0, expectedTtl + 2.0);
    }
}
