package dev.synapsehub.net;

import dev.synapsehub.client.HubClient;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Hostile claim paths on an open hub without message authentication (contract §7.1, §4.4):
 * traversal, absolute, NUL, bidi controls, an over-long path and too many paths all widen the
 * claim to the whole worktree (echoed {@code paths: [""]}), which then conflicts with any
 * other claim in that worktree. Widening may over-claim, never under-claim. A {@code paths}
 * that is not an array is a typed error and changes nothing.
 */
class HostilePathsTest {

    private static Map<String, List<String>> hostile() {
        Map<String, List<String>> m = new LinkedHashMap<>();
        m.put("traversal", List.of("../../etc/passwd"));
        m.put("inner traversal", List.of("src/../../../etc/shadow"));
        m.put("absolute", List.of("/etc/passwd"));
        m.put("backslash absolute", List.of("\\etc\\passwd"));
        m.put("NUL", List.of("src/a\u0000b.py"));
        m.put("bidi override", List.of("src/\u202Egnp.exe"));
        m.put("bidi isolate", List.of("src/\u2067evil\u2069.py"));
        m.put("zero width", List.of("src/\u200Bhidden.py"));
        m.put("newline", List.of("src/a\nb.py"));
        m.put("5000 chars", List.of("src/" + "a".repeat(4996)));
        List<String> many = new ArrayList<>();
        for (int i = 0; i < 600; i++) {
            many.add("src/f" + i + ".py");
        }
        m.put("600 paths", many);
        m.put("one bad among good", List.of("src/ok.py", "docs/x.md", "../escape"));
        return m;
    }

    private static ObjectNode claim(HubClient c, String task, String worktree, List<String> paths) {
        ObjectNode f = c.frame("claim");
        f.put("task_id", task).put("worktree", worktree).put("ttl_seconds", 600);
        ArrayNode p = f.putArray("paths");
        paths.forEach(p::add);
        return f;
    }

    @Test
    void hostilePathsWidenTheClaimToTheWholeWorktreeAndConflictAccordingly() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient attacker = hub.agent("p/attacker");
            HubClient other = hub.agent("p/other");
            int i = 0;
            for (Map.Entry<String, List<String>> e : hostile().entrySet()) {
                String worktree = "wt-" + i++;
                attacker.send(claim(attacker, "H-" + worktree, worktree, e.getValue()));
                ObjectNode granted = attacker.awaitType("claim_granted", WAIT);
                assertThat(granted.path("paths").toString()).as(e.getKey()).isEqualTo("[\"\"]");
                assertThat(granted.path("owner").asText()).isEqualTo("p/attacker");
                other.awaitType("claim_granted", WAIT); // the broadcast
                // any other claim in that worktree now conflicts, however far from the hostile text
                other.send(claim(other, "O-" + worktree, worktree, List.of("unrelated/dir/file.txt")));
                ObjectNode denied = other.awaitType("claim_denied", WAIT);
                assertThat(denied.path("reason_code").asText()).as(e.getKey()).isEqualTo("SCOPE_CONFLICT");
            }
            // control: ordinary paths are echoed normalised and only overlapping ones conflict
            attacker.send(claim(attacker, "H-ctl", "ctl", List.of(" ./src//ok.py ", "src\\win.py")));
            ObjectNode ok = attacker.awaitType("claim_granted", WAIT);
            assertThat(ok.path("paths").toString()).isEqualTo("[\"src/ok.py\",\"src/win.py\"]");
            other.awaitType("claim_granted", WAIT);
            other.send(claim(other, "O-ctl", "ctl", List.of("docs/readme.md")));
            other.awaitType("claim_granted", WAIT);
            other.send(claim(other, "O-ctl2", "ctl", List.of("src/ok.py/inner")));
            assertThat(other.awaitType("claim_denied", WAIT).path("reason_code").asText()).isEqualTo("SCOPE_CONFLICT");

            JsonNode claims = TestHub.state(attacker).path("snapshot").path("active_claims");
            assertThat(claims).hasSize(hostile().size() + 2);
            for (JsonNode c : claims) {
                if (c.path("owner").asText().equals("p/attacker") && !c.path("task_id").asText().equals("H-ctl")) {
                    assertThat(c.path("paths").toString()).isEqualTo("[\"\"]");
                }
            }
            assertThat(hub.server.services().metrics().faults.get()).isZero();
        }
    }

    @Test
    void pathsThatIsNotAnArrayIsATypedErrorAndChangesNothing() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient a = hub.agent("p/a");
            HubClient b = hub.agent("p/b");
            a.awaitType("presence_update", WAIT); // b joined
            a.send(claim(a, "T", "wt", List.of("src/a.py")));
            a.awaitType("claim_granted", WAIT);
            b.awaitType("claim_granted", WAIT);
            String before = TestHub.state(a).path("snapshot").path("active_claims").toString();
            List<String> bad = List.of("\"../../etc/passwd\"", "{\"0\":\"src\"}", "7", "true", "[\"src\",null]",
                    "[[\"src\"]]", "[\"src\",{\"p\":1}]");
            for (String paths : bad) {
                // T is a renewal by its owner, U a fresh claim: neither may happen
                for (String task : List.of("T", "U")) {
                    a.sendText("{\"sender\":\"p/a\",\"type\":\"claim\",\"task_id\":\"" + task
                            + "\",\"worktree\":\"wt\",\"paths\":" + paths + "}");
                    ObjectNode e = a.awaitType("error", WAIT);
                    assertThat(e.path("error_code").asText()).as(paths).isEqualTo("malformed_request");
                    assertThat(e.path("field").asText()).as(paths).isEqualTo("paths");
                    assertThat(e.path("target").asText()).isEqualTo("p/a");
                }
            }
            assertThat(TestHub.state(a).path("snapshot").path("active_claims").toString()).isEqualTo(before);
            TestHub.assertQuiet(b); // nothing was broadcast
            assertThat(a.isOpen()).isTrue();
        }
    }
}
