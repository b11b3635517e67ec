package dev.synapsehub.net;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Release receipts with evidence over a real loopback socket: the cleaning of R1, the grade and
 * exact reasons of R2, and the {@code assessment} note of R3 (contract A11), row by row.
 */
class ReleaseReceiptWireTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String KF = "known failures declared";
    private static final String POS = "positive evidence present";
    private static final String NO_POS = "no positive evidence, artifact, changed file, generated artifact, or approval";
    private static final String MISSING = "freshness_seconds missing";
    private static final String OLD = "evidence age exceeds 3600 seconds";
    private static final String FRESH = "fresh evidence present but unverified";

    /** What the hub answered one release: the receipt and the note text (null when none was posted). */
    private record Released(JsonNode receipt, String note, JsonNode noteFrame) {
        List<String> reasons() {
            List<String> out = new ArrayList<>();
            receipt.path("epistemic_reasons").forEach(n -> out.add(n.asText()));
            return out;
        }
    }

    private int tasks;

    private Released release(HubClient a, HubClient observer, String members) throws Exception {
        String taskId = "R" + (++tasks);
        ObjectNode claim = a.frame("claim");
        claim.put("task_id", taskId).put("worktree", "wt");
        claim.putArray("paths").add("src/" + taskId);
        a.send(claim);
        a.await(f -> "claim_granted".equals(f.path("type").asText()) && taskId.equals(f.path("task_id").asText()), WAIT);
        ObjectNode release = a.frame("release");
        release.put("task_id", "  " + taskId + " ");
        release.setAll((ObjectNode) JSON.readTree(members));
        a.send(release);
        JsonNode granted = observer.await(f -> "release_granted".equals(f.path("type").asText())
                && taskId.equals(f.path("task_id").asText()), WAIT);
        observer.send(observer.frame("board_request"));
        JsonNode board = observer.awaitType("board_snapshot", WAIT).path("board");
        String note = null;
        for (JsonNode n : board.path("progress")) {
            if (taskId.equals(n.path("task_id").asText())) {
                assertThat(note).as("one note per release").isNull();
                note = n.path("text").asText();
                assertThat(n.path("kind").asText()).isEqualTo("assessment");
                assertThat(n.path("author").asText()).isEqualTo("p/alpha");
            }
        }
        JsonNode noteFrame = null;
        if (note != null) {
            noteFrame = observer.await(f -> "ledger_progress_posted".equals(f.path("type").asText())
                    && taskId.equals(f.path("note").path("task_id").asText()), WAIT);
        }
        return new Released(granted.path("receipt"), note, noteFrame);
    }

    @Test
    void theDecisionTableGradesEveryRowWithItsExactReasons() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient a = hub.agent("p/alpha");
            HubClient b = hub.agent("p/beta");

            Released r1 = release(a, b, "{\"known_failures\":[\"flaky\"]}");
            assertThat(r1.receipt().path("epistemic_status").asText()).isEqualTo("degraded");
            assertThat(r1.reasons()).containsExactly(KF, NO_POS);
            assertThat(r1.note()).isEqualTo("release receipt: known_failures=flaky; epistemic_status=degraded;"
                    + " epistemic_reasons=known failures declared, no positive evidence, artifact, changed file,"
                    + " generated artifact, or approval");

            Released r2 = release(a, b, "{\"known_failures\":\"flaky\",\"evidence\":[\"ok\"],\"freshness_seconds\":1e9}");
            assertThat(r2.receipt().path("epistemic_status").asText()).isEqualTo("degraded");
            assertThat(r2.reasons()).containsExactly(KF, POS);

            Released r3 = release(a, b, "{\"confidence\":\"high\"}");
            assertThat(r3.receipt().path("epistemic_status").asText()).isEqualTo("unsupported");
            assertThat(r3.reasons()).containsExactly(NO_POS);
            assertThat(r3.note()).isEqualTo("release receipt: confidence=high; epistemic_status=unsupported;"
                    + " epistemic_reasons=" + NO_POS);

            Released r4 = release(a, b, "{\"changed_files\":[\"a.py\"]}");
            assertThat(r4.receipt().path("epistemic_status").asText()).isEqualTo("needs_freshness");
            assertThat(r4.reasons()).containsExactly(POS, MISSING);

            Released r5 = release(a, b, "{\"evidence\":\"pytest ok\",\"freshness_seconds\":10}");
            assertThat(r5.receipt().path("epistemic_status").asText()).isEqualTo("unverified");
            assertThat(r5.reasons()).containsExactly(POS, FRESH);
            assertThat(r5.receipt().path("freshness_seconds").toString()).isEqualTo("10.0");
            assertThat(r5.note()).isEqualTo("release receipt: evidence=pytest ok; freshness_seconds=10.0;"
                    + " epistemic_status=unverified; epistemic_reasons=positive evidence present, fresh evidence"
                    + " present but unverified");
            assertThat(r5.noteFrame().path("sender").asText()).isEqualTo("SynapseHub");
            assertThat(r5.noteFrame().path("target").asText()).isEqualTo("all");
            assertThat(r5.noteFrame().path("payload").asText()).isEqualTo("Release receipt from p/alpha");
            assertThat(r5.noteFrame().path("note").path("task_id").asText()).isEqualTo("R5");

            assertThat(release(a, b, "{\"evidence\":[\"x\"],\"freshness_seconds\":\"3600.0000001\"}").reasons())
                    .containsExactly(POS, OLD);
            assertThat(release(a, b, "{\"evidence\":[\"x\"],\"freshness_seconds\":3600}").reasons())
                    .containsExactly(POS, FRESH);
            Released inf = release(a, b, "{\"evidence\":[\"x\"],\"freshness_seconds\":\" INF \"}");
            assertThat(inf.reasons()).containsExactly(POS, OLD);
            assertThat(inf.note()).contains("freshness_seconds=inf;");
            Released nan = release(a, b, "{\"evidence\":[\"x\"],\"freshness_seconds\":\"nan\"}");
            assertThat(nan.receipt().path("epistemic_status").asText()).isEqualTo("unverified");
            assertThat(nan.note()).contains("freshness_seconds=nan;");
            Released negative = release(a, b, "{\"approvals\":[\"lead\"],\"freshness_seconds\":-5}");
            assertThat(negative.reasons()).containsExactly(POS, FRESH);
            assertThat(negative.receipt().path("freshness_seconds").toString()).isEqualTo("0.0");
        }
    }

    @Test
    void listsConfidenceAndFreshnessAreCleanedAsTheContractSays() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient a = hub.agent("p/alpha");
            HubClient b = hub.agent("p/beta");

            Released items = release(a, b,
                    "{\"evidence\":[1,1.5,100.0,1e20,true,null,[\"x\"],{\"a\":1},\"  \",\"\\u00a0y\\u2007\"]}");
            List<String> evidence = new ArrayList<>();
            items.receipt().path("evidence").forEach(n -> evidence.add(n.asText()));
            assertThat(evidence).containsExactly("1", "1.5", "100.0", "1e+20", "True", "None", "['x']", "{'a': 1}", "y");

            ArrayNode many = JSON.createArrayNode();
            for (int i = 0; i < 80; i++) { // 27 blanks, 53 items: blanks do not count toward the 50
                many.add(i % 3 == 0 ? " " : "item-" + i);
            }
            ObjectNode members = JSON.createObjectNode();
            members.set("artifacts", many);
            members.putArray("generated_artifacts").add("\uD83D\uDE00".repeat(600));
            Released capped = release(a, b, members.toString());
            assertThat(capped.receipt().path("artifacts")).hasSize(50);
            assertThat(capped.receipt().path("artifacts").get(0).asText()).isEqualTo("item-1");
            String emoji = capped.receipt().path("generated_artifacts").get(0).asText();
            assertThat(emoji.codePointCount(0, emoji.length())).isEqualTo(500);

            Released none = release(a, b, "{\"confidence\":null}");
            assertThat(none.receipt().path("confidence").asText()).isEqualTo("None");
            assertThat(none.note()).startsWith("release receipt: confidence=None; ");
            Released list = release(a, b, "{\"confidence\":[\"a\",1],\"evidence\":[\"e\"]}");
            assertThat(list.receipt().path("confidence").asText()).isEqualTo("['a', 1]");
            assertThat(list.reasons()).containsExactly(POS, MISSING); // confidence never grades

            Released onlyFresh = release(a, b, "{\"freshness_seconds\":5}");
            assertThat(onlyFresh.reasons()).containsExactly(NO_POS);
            assertThat(onlyFresh.note()).isEqualTo("release receipt: freshness_seconds=5.0; epistemic_status=unsupported;"
                    + " epistemic_reasons=" + NO_POS);

            for (String[] parsed : new String[][] {{"\"12\"", "12.0"}, {"\" 7 \"", "7.0"}, {"\"1e3\"", "1000.0"},
                    {"\"1_000\"", "1000.0"}, {"3600.5", "3600.5"}, {"1e16", "1e+16"}}) {
                Released r = release(a, b, "{\"evidence\":[\"e\"],\"freshness_seconds\":" + parsed[0] + "}");
                assertThat(r.receipt().path("freshness_seconds").isDouble()).as(parsed[0]).isTrue();
                assertThat(r.receipt().path("freshness_seconds").asDouble()).isEqualTo(Double.parseDouble(parsed[1]));
                assertThat(r.note()).contains("freshness_seconds=" + parsed[1] + ";");
            }
            for (String unparsed : new String[] {"true", "\"\"", "\"abc\"", "\"0x10\"", "[]", "{}", "null"}) {
                Released r = release(a, b, "{\"evidence\":[\"e\"],\"freshness_seconds\":" + unparsed + "}");
                assertThat(r.receipt().has("freshness_seconds")).as(unparsed).isFalse();
                assertThat(r.reasons()).as(unparsed).containsExactly(POS, MISSING);
            }
        }
    }

    @Test
    void noNoteWithoutEvidence() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient a = hub.agent("p/alpha");
            HubClient b = hub.agent("p/beta");
            for (String members : new String[] {"{}", "{\"evidence\":[],\"artifacts\":[\"  \"]}",
                    "{\"confidence\":\"  \"}", "{\"freshness_seconds\":\"abc\"}", "{\"freshness_seconds\":null}",
                    "{\"evidence\":{\"evidence\":[\"x\"],\"confidence\":\"high\"}}"}) {
                Released r = release(a, b, members);
                assertThat(r.note()).as(members).isNull();
                assertThat(r.receipt().path("epistemic_status").asText()).isEqualTo("unsupported");
                assertThat(r.reasons()).containsExactly(NO_POS);
            }
        }
    }

    /**
     * R1.3: {@code float("1" * 5000)} is +inf in Python, so the release is granted and graded
     * stale; the parse must not overflow the stack (close 1011, task left held).
     */
    @Test
    void aDigitStringTooLongForADoubleGradesStaleAndReleases() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient a = hub.agent("p/alpha");
            HubClient b = hub.agent("p/beta");
            Released r = release(a, b, "{\"evidence\":[\"pytest ok\"],\"freshness_seconds\":\"" + "1".repeat(5000) + "\"}");
            assertThat(r.receipt().path("epistemic_status").asText()).isEqualTo("stale");
            assertThat(r.reasons()).containsExactly(POS, OLD);
            assertThat(r.note()).contains("freshness_seconds=inf;");
            Released fullwidth = release(a, b, "{\"evidence\":[\"ok\"],\"freshness_seconds\":\"\uFF11\uFF12\"}");
            assertThat(fullwidth.receipt().path("freshness_seconds").asDouble()).isEqualTo(12.0);
            assertThat(a.isOpen()).isTrue();
        }
    }
}
