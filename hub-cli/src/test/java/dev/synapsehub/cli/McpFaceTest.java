package dev.synapsehub.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import io.modelcontextprotocol.spec.McpSchema;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code synapse-hub mcp} driven by the MCP SDK's client over stdio, against a real hub on loopback. */
class McpFaceTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final ObjectMapper JSON = new ObjectMapper();
    private final LoopbackHub hub = new LoopbackHub();
    private McpAgent agent;

    @AfterEach
    void stop() throws Exception {
        if (agent != null) {
            agent.close();
        }
        hub.close();
    }

    private McpAgent startAgent(String... extra) {
        List<String> args = new java.util.ArrayList<>(List.of("--name", "proj/coder", "--url", hub.url(), "--timeout", "10"));
        args.addAll(List.of(extra));
        agent = new McpAgent(args.toArray(String[]::new));
        return agent;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object o) {
        return (Map<String, Object>) o;
    }

    private static Map<String, Object> reply(Map<String, Object> result) {
        return map(result.get("reply"));
    }

    private static Map<String, Object> error(McpSchema.CallToolResult result) {
        assertThat(result.isError()).as("expected a tool error: %s", result.structuredContent()).isTrue();
        return map(map(result.structuredContent()).get("error"));
    }

    private static Map<String, Object> ok(McpSchema.CallToolResult result) {
        assertThat(result.isError()).as("expected success: %s", result.structuredContent()).isFalse();
        return map(result.structuredContent());
    }

    private HubClient other() throws Exception {
        HubClient other = HubClient.connect(URI.create(hub.url()), WAIT);
        other.register("proj/other", null, WAIT);
        return other;
    }

    private static ObjectNode claimAs(HubClient who, String task, String... paths) throws Exception {
        ObjectNode f = who.frame("claim");
        f.put("task_id", task);
        f.putArray("paths").addAll(java.util.Arrays.stream(paths).map(f::textNode).toList());
        who.send(f);
        return who.await(r -> r.path("type").asText().startsWith("claim_") && task.equals(r.path("task_id").asText())
                && (r.path("type").asText().equals("claim_denied") || who.name().equals(r.path("owner").asText())), WAIT);
    }

    @Test
    void toolsAreDescribedArgumentsCheckedAndARefusedAgentIsReportedNotRetried() throws Exception {
        hub.start("--port", "0", "--token", "right-token");
        startAgent("--token", "wrong-token");
        List<McpSchema.Tool> tools = agent.client().listTools().tools();
        assertThat(tools.stream().map(McpSchema.Tool::name).collect(Collectors.toSet())).isEqualTo(Set.of("claim",
                "renew", "release", "handoff", "checkpoint", "task_update", "ledger_task", "ledger_task_update",
                "ledger_progress", "send", "inbox", "state", "who", "board"));
        for (McpSchema.Tool tool : tools) {
            assertThat(tool.description()).as(tool.name()).hasSizeGreaterThan(40);
            JsonNode schema = JSON.valueToTree(tool.inputSchema());
            assertThat(schema.path("type").asText()).isEqualTo("object");
            schema.path("properties").fields().forEachRemaining(p -> {
                assertThat(p.getValue().path("type").asText()).as(tool.name() + "." + p.getKey()).isNotEmpty();
                assertThat(p.getValue().path("description").asText()).as(tool.name() + "." + p.getKey()).isNotEmpty();
            });
        }
        McpSchema.Tool claim = tools.stream().filter(t -> t.name().equals("claim")).findFirst().orElseThrow();
        JsonNode claimSchema = JSON.valueToTree(claim.inputSchema());
        assertThat(claimSchema.path("required").toString()).isEqualTo("[\"task_id\"]");
        assertThat(claimSchema.path("properties").path("paths").path("items").path("type").asText()).isEqualTo("string");
        assertThat(agent.client().listResources().resources().stream().map(McpSchema.Resource::uri)
                .collect(Collectors.toSet())).isEqualTo(Set.of("synapse://state", "synapse://who", "synapse://board",
                        "synapse://link"));

        // arguments that do not fit the schema: typed, naming the field, nothing sent
        assertThat(error(agent.call("claim", Map.of("task_id", "t", "paths", "src/a"))))
                .containsEntry("type", "invalid_arguments").containsEntry("field", "paths");
        assertThat(error(agent.call("claim", Map.of("task_id", "t", "path", List.of("src/a")))))
                .containsEntry("type", "invalid_arguments").containsEntry("field", "path");
        assertThat(error(agent.call("ledger_progress", Map.of("text", "x", "kind", "gossip"))))
                .containsEntry("type", "invalid_arguments").containsEntry("field", "kind");
        assertThat(error(agent.call("release", Map.of()))).containsEntry("field", "task_id");

        // the hub refuses the token: reported as such, and not retried (one connection attempt's refusal)
        Map<String, Object> refused = error(agent.call("who", Map.of()));
        assertThat(refused).containsEntry("type", "hub_unavailable");
        assertThat((String) refused.get("message")).contains("refused").contains("auth_denied");
        JsonNode link = JSON.readTree(agent.read("synapse://link"));
        assertThat(link.path("connected").asBoolean()).isFalse();
        assertThat(link.path("refused").asText()).contains("auth_denied");
    }

    @Test
    void claimFamilyToolsAnswerWithTheHubsFramesAndItsTypedRefusals(@TempDir Path dir) throws Exception {
        hub.start("--port", "0", "--db", dir.resolve("hub.db").toString());
        try (HubClient other = other()) {
            assertThat(claimAs(other, "lexer", "src/lexer").path("type").asText()).isEqualTo("claim_granted");
            startAgent();

            Map<String, Object> granted = reply(ok(agent.call("claim", Map.of("task_id", "parser",
                    "paths", List.of("src/parser"), "worktree", "", "ttl_seconds", 600, "note", "rewriting"))));
            assertThat(granted).containsEntry("type", "claim_granted").containsEntry("owner", "proj/coder")
                    .containsEntry("note", "rewriting").containsEntry("version", 0);
            long epoch = ((Number) granted.get("epoch")).longValue();

            assertThat(error(agent.call("claim", Map.of("task_id", "lexer"))))
                    .containsEntry("type", "claim_denied").containsEntry("reason_code", "LEASE_LIVE")
                    .containsEntry("task_id", "lexer");
            assertThat(error(agent.call("claim", Map.of("task_id", "big", "paths", List.of("src")))))
                    .containsEntry("type", "claim_denied").containsEntry("reason_code", "SCOPE_CONFLICT");

            assertThat(reply(ok(agent.call("checkpoint", Map.of("task_id", "parser", "checkpoint", "step-3")))))
                    .containsEntry("type", "checkpoint_saved").containsEntry("version", 1);
            assertThat(error(agent.call("checkpoint", Map.of("task_id", "lexer", "checkpoint", "x"))))
                    .containsEntry("type", "checkpoint_denied");
            assertThat(reply(ok(agent.call("task_update", Map.of("task_id", "parser", "status", "working",
                    "data_ref", "branch:parser")))))
                    .containsEntry("type", "task_updated").containsEntry("status", "working").containsEntry("version", 2);
            assertThat(error(agent.call("task_update", Map.of("task_id", "parser", "status", "claimed"))))
                    .containsEntry("type", "error");
            assertThat(error(agent.call("task_update", Map.of("task_id", "parser", "note", "n", "epoch", epoch + 100))))
                    .containsEntry("type", "error");

            Map<String, Object> renewed = reply(ok(agent.call("renew", Map.of("task_id", "parser", "ttl_seconds", 900))));
            assertThat(((Number) renewed.get("epoch")).longValue()).isGreaterThan(epoch);
            assertThat(renewed).containsEntry("paths", List.of("src/parser")).containsEntry("checkpoint", "step-3")
                    .containsEntry("note", "rewriting");
            long renewedEpoch = ((Number) renewed.get("epoch")).longValue();
            assertThat(error(agent.call("renew", Map.of("task_id", "lexer"))))
                    .containsEntry("type", "not_held").containsEntry("holder", "proj/other");
            assertThat(error(agent.call("renew", Map.of("task_id", "nothing")))).containsEntry("type", "not_held");

            assertThat(error(agent.call("release", Map.of("task_id", "parser", "epoch", epoch))))
                    .containsEntry("type", "release_denied").containsEntry("task_id", "parser");
            Map<String, Object> released = reply(ok(agent.call("release", Map.of("task_id", "parser",
                    "epoch", renewedEpoch, "evidence", List.of("mvn test: 212 passed"),
                    "changed_files", List.of("src/parser/Parser.java"), "freshness_seconds", 30, "confidence", "high"))));
            assertThat(released).containsEntry("type", "release_granted");
            assertThat(map(released.get("receipt"))).containsEntry("evidence", List.of("mvn test: 212 passed"))
                    .containsEntry("epistemic_status", "unverified");

            assertThat(ok(agent.call("claim", Map.of("task_id", "docs", "worktree", "docs"))).get("ok")).isEqualTo(true);
            assertThat(reply(ok(agent.call("handoff", Map.of("task_id", "docs", "to_agent", "proj/other",
                    "note", "yours")))))
                    .containsEntry("type", "handoff_granted").containsEntry("owner", "proj/other")
                    .containsEntry("previous_owner", "proj/coder");
            assertThat(error(agent.call("handoff", Map.of("task_id", "docs", "to_agent", "proj/nobody"))))
                    .containsEntry("type", "handoff_denied");

            // the other agent hands its task over: the MCP agent learns it from its inbox
            ObjectNode give = other.frame("handoff");
            give.put("task_id", "lexer");
            give.put("to_agent", "proj/coder");
            other.send(give);
            other.await(f -> "handoff_granted".equals(f.path("type").asText()), WAIT);
            Map<String, Object> inbox = ok(agent.call("inbox", Map.of("wait_seconds", 10)));
            assertThat(inbox.get("items").toString()).contains("kind=handoff_granted").contains("task_id=lexer");
            JsonNode state = JSON.readTree(agent.read("synapse://state"));
            assertThat(state.path("active_claims").toString()).contains("\"task_id\":\"lexer\",\"owner\":\"proj/coder\"");
        }
    }

    @Test
    void boardToolsAndTheBoardResource() throws Exception {
        hub.start("--port", "0");
        startAgent();
        assertThat(reply(ok(agent.call("ledger_task", Map.of("task_id", "design", "title", "Design the parser")))))
                .containsEntry("type", "ledger_task_posted");
        assertThat(map(reply(ok(agent.call("ledger_task", Map.of("task_id", "build", "title", "Build it",
                "depends_on", List.of("design"), "suggested_owner", "proj/coder")))).get("task")))
                .containsEntry("status", "open").containsEntry("created_by", "proj/coder");
        Map<String, Object> cycle = error(agent.call("ledger_task", Map.of("task_id", "design", "title", "Design",
                "depends_on", List.of("build"))));
        assertThat(cycle).containsEntry("type", "error");
        assertThat((String) cycle.get("message")).containsIgnoringCase("cycle");
        assertThat(error(agent.call("ledger_task_update", Map.of("task_id", "design", "status", "done",
                "expected_version", 7)))).containsEntry("type", "error");
        assertThat(map(reply(ok(agent.call("ledger_task_update", Map.of("task_id", "design", "status", "done"))))
                .get("task"))).containsEntry("status", "done").containsEntry("version", 2);
        assertThat(map(reply(ok(agent.call("ledger_progress", Map.of("task_id", "build", "text", "starting",
                "kind", "note")))).get("note"))).containsEntry("author", "proj/coder").containsEntry("text", "starting");

        JsonNode board = JSON.readTree(agent.read("synapse://board"));
        assertThat(board.path("ready").toString()).isEqualTo("[\"build\"]");
        assertThat(board.path("progress").toString()).contains("starting");
        assertThat(map(ok(agent.call("board", Map.of())).get("board")).get("ready")).isEqualTo(List.of("build"));
        assertThat(ok(agent.call("state", Map.of()))).containsEntry("type", "state_snapshot").containsKey("snapshot");
        assertThat(ok(agent.call("who", Map.of())).get("online_agents")).isEqualTo(List.of("proj/coder"));
    }

    @Test
    void messagesGoOutAndComeInThroughTheMailboxWithAcks(@TempDir Path dir) throws Exception {
        hub.start("--port", "0", "--db", dir.resolve("hub.db").toString());
        try (HubClient other = other()) {
            ObjectNode early = other.frame("chat");
            early.put("target", "proj/coder");
            early.put("payload", "review the parser when you are in");
            other.send(early);
            ObjectNode echoed = other.await(f -> "chat".equals(f.path("type").asText()), WAIT);
            long seq = echoed.path("seq").asLong();
            assertThat(seq).isPositive();

            startAgent();
            Map<String, Object> first = ok(agent.call("inbox", Map.of("wait_seconds", 10)));
            Map<String, Object> item = map(((List<?>) first.get("items")).get(0));
            assertThat(item).containsEntry("kind", "chat").containsEntry("sender", "proj/other")
                    .containsEntry("payload", "review the parser when you are in").containsEntry("replayed", true)
                    .containsEntry("directed", true);
            assertThat(((Number) item.get("seq")).longValue()).isEqualTo(seq);
            assertThat(((List<?>) first.get("acked")).stream().map(n -> ((Number) n).longValue()).toList())
                    .isEqualTo(List.of(seq));
            // the ack reached the hub: the mailbox backlog of proj/coder drains
            long deadline = System.nanoTime() + WAIT.toNanos();
            JsonNode pending;
            do {
                pending = JSON.readTree(agent.read("synapse://who")).path("mailbox_pending").path("proj/coder");
            } while (pending.asInt(0) > 0 && System.nanoTime() < deadline);
            assertThat(pending.asInt(0)).isZero();

            Map<String, Object> sent = ok(agent.call("send", Map.of("to", "proj/other", "text", "on it",
                    "receipt", true)));
            assertThat(map(sent.get("receipt"))).containsEntry("delivered", true);
            assertThat(other.await(f -> "chat".equals(f.path("type").asText())
                    && "proj/coder".equals(f.path("sender").asText()), WAIT).path("payload").asText()).isEqualTo("on it");

            ObjectNode all = other.frame("chat");
            all.put("target", "all");
            all.put("payload", "standup in 5");
            other.send(all);
            Map<String, Object> next = ok(agent.call("inbox", Map.of("wait_seconds", 10)));
            assertThat(map(((List<?>) next.get("items")).get(0))).containsEntry("payload", "standup in 5")
                    .containsEntry("directed", false);
            assertThat(ok(agent.call("inbox", Map.of())).get("items")).isEqualTo(List.of());
        }
    }

    /** Sends a chat from {@code who} and returns its journal seq, from the hub's echo. */
    private static long chat(HubClient who, String target, String payload) throws Exception {
        ObjectNode f = who.frame("chat");
        f.put("target", target);
        f.put("payload", payload);
        who.send(f);
        return who.await(e -> "chat".equals(e.path("type").asText()) && payload.equals(e.path("payload").asText()),
                WAIT).path("seq").asLong();
    }

    private static List<Object> payloads(Map<String, Object> inbox) {
        return ((List<?>) inbox.get("items")).stream().map(i -> map(i).get("payload")).toList();
    }

    @Test
    void aLaterAckReleasesTheCursorHeldByAnUnackedReadSoTheReplayWindowReachesWhatCameMeanwhile(@TempDir Path dir)
            throws Exception {
        hub.start("--port", "0", "--db", dir.resolve("hub.db").toString());
        String cursorFile = dir.resolve("coder.cursor").toString();
        try (HubClient other = other()) {
            startAgent("--cursor-file", cursorFile);
            long peeked = chat(other, "proj/coder", "peeked at");
            Map<String, Object> peek = ok(agent.call("inbox", Map.of("wait_seconds", 10, "ack", false)));
            assertThat(payloads(peek)).isEqualTo(List.of("peeked at"));
            assertThat(peek.get("acked")).isEqualTo(List.of());
            assertThat(JSON.readTree(agent.read("synapse://link")).path("inbox_cursor").asLong()).isEqualTo(peeked - 1);

            // more chats than one mailbox replay scans (contract §8.3: the first 1000 after since_seq)
            for (int i = 0; i < 1000; i++) {
                ObjectNode f = other.frame("chat");
                f.put("target", "proj/elsewhere");
                f.put("payload", "chatter " + i);
                other.send(f);
            }
            chat(other, "proj/elsewhere", "chatter done");
            long read = chat(other, "proj/coder", "read and acked");
            Map<String, Object> ack = ok(agent.call("inbox", Map.of("wait_seconds", 10)));
            assertThat(payloads(ack)).isEqualTo(List.of("read and acked"));
            assertThat(((List<?>) ack.get("acked")).stream().map(n -> ((Number) n).longValue()).toList())
                    .isEqualTo(List.of(read));
            // the hub's ack is cumulative: acking this seq counts the one peeked at read as well
            assertThat(JSON.readTree(agent.read("synapse://link")).path("inbox_cursor").asLong()).isEqualTo(read);

            agent.close();
            agent = null;
            awaitOffline(other, "proj/coder");
            chat(other, "proj/coder", "sent while away");
            startAgent("--cursor-file", cursorFile);
            // replayed oldest first: had the registration asked from the peeked seq, its scan would
            // have ended in the chatter, replaying the peeked chat and missing this one
            Map<String, Object> back = ok(agent.call("inbox", Map.of("wait_seconds", 10)));
            assertThat(payloads(back)).first().isEqualTo("sent while away");
            assertThat(map(((List<?>) back.get("items")).get(0))).containsEntry("replayed", true);
        }
    }

    /** Waits until the hub no longer lists {@code name} online (its old connection is gone, so the name is free). */
    private static void awaitOffline(HubClient who, String name) throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (true) {
            who.send(who.frame("who_request"));
            JsonNode online = who.awaitType("who_snapshot", WAIT).path("online_agents");
            boolean present = false;
            for (JsonNode n : online) {
                present |= name.equals(n.asText());
            }
            if (!present) {
                return;
            }
            assertThat(System.nanoTime()).as("%s still online", name).isLessThan(deadline);
        }
    }

    @Test
    void aKeyedRetryIsAppliedOnceEvenAcrossAHubRestart(@TempDir Path dir) throws Exception {
        String db = dir.resolve("hub.db").toString();
        int port = hub.start("--port", "0", "--db", db).port();
        startAgent();
        Map<String, Object> first = reply(ok(agent.call("claim", Map.of("task_id", "T", "idem_key", "k-1"))));
        Object epoch = first.get("epoch");
        Map<String, Object> again = ok(agent.call("claim", Map.of("task_id", "T", "idem_key", "k-1")));
        assertThat(again.get("idem_key")).isEqualTo("k-1");
        assertThat(reply(again).get("epoch")).isEqualTo(epoch);
        assertThat(JSON.readTree(agent.read("synapse://state")).path("active_claims").get(0).path("epoch").asLong())
                .isEqualTo(((Number) epoch).longValue());
        // the same claim without the key is a renewal: a new epoch (so the key is what kept the retry out)
        Object renewedEpoch = reply(ok(agent.call("claim", Map.of("task_id", "T")))).get("epoch");
        assertThat(((Number) renewedEpoch).longValue()).isGreaterThan(((Number) epoch).longValue());
        // same key, different request: the hub's typed idempotency conflict
        assertThat(error(agent.call("claim", Map.of("task_id", "T", "note", "other", "idem_key", "k-1"))))
                .containsEntry("type", "error").containsEntry("error_code", "idempotency_conflict");

        hub.close();
        hub.start("--port", String.valueOf(port), "--db", db);
        Map<String, Object> afterRestart = ok(agent.call("claim", Map.of("task_id", "T", "idem_key", "k-1")));
        assertThat(reply(afterRestart).get("epoch")).isEqualTo(epoch);
        assertThat(JSON.readTree(agent.read("synapse://state")).path("active_claims").get(0).path("epoch").asLong())
                .isEqualTo(((Number) renewedEpoch).longValue());
        assertThat(JSON.readTree(agent.read("synapse://link")).path("connections").asLong()).isEqualTo(2);
    }

    @Test
    void everyKeyedResultCarriesTheIdemKeyUsedEvenNoAnswer(@TempDir Path dir) throws Exception {
        try (FreezableRelay relay = new FreezableRelay()) {
            relay.to(hub.start("--port", "0", "--db", dir.resolve("hub.db").toString(),
                    "--advertised-host", relay.authority()).port());
            try (HubClient other = other()) {
                claimAs(other, "lexer", "src/lexer");
            }
            agent = new McpAgent("--name", "proj/coder", "--url", relay.url(), "--timeout", "3");
            Map<String, Object> granted = ok(agent.call("claim", Map.of("task_id", "T", "paths", List.of("src/t"))));
            assertThat((String) granted.get("idem_key")).isNotBlank();
            McpSchema.CallToolResult denied = agent.call("claim", Map.of("task_id", "lexer"));
            assertThat(error(denied)).containsEntry("type", "claim_denied");
            assertThat((String) map(denied.structuredContent()).get("idem_key")).isNotBlank();

            // the hub takes the request and does not answer in time (as if stopped)
            relay.freeze();
            McpSchema.CallToolResult late = agent.call("claim", Map.of("task_id", "U", "paths", List.of("src/u")));
            assertThat(error(late)).containsEntry("type", "no_answer");
            String key = (String) map(late.structuredContent()).get("idem_key");
            assertThat(key).as("the key to retry with").isNotBlank();
            relay.thaw();
            // the retry with the returned key is answered from the first outcome: applied once
            long epoch = -1;
            for (JsonNode c : JSON.readTree(agent.read("synapse://state")).path("active_claims")) {
                if ("U".equals(c.path("task_id").asText())) {
                    epoch = c.path("epoch").asLong();
                }
            }
            assertThat(epoch).as("the late claim was applied").isPositive();
            Map<String, Object> retried = ok(agent.call("claim", Map.of("task_id", "U", "paths", List.of("src/u"),
                    "idem_key", key)));
            assertThat(retried.get("idem_key")).isEqualTo(key);
            assertThat(((Number) reply(retried).get("epoch")).longValue()).isEqualTo(epoch);

            relay.freeze();
            McpSchema.CallToolResult unsent = agent.call("send", Map.of("to", "proj/other", "text", "hello"));
            assertThat(error(unsent)).containsEntry("type", "no_answer");
            assertThat((String) map(unsent.structuredContent()).get("client_msg_id"))
                    .as("the id to resend with (receivers deduplicate on it)").startsWith("mcp-");
            relay.thaw();
        }
    }
}
