package dev.synapsehub.net;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Wire strings the reference trims with Python's {@code str.strip()} (A11 R1.1 names the set):
 * U+00A0, U+2007, U+202F and U+0085 are whitespace there, so a member edged by them is the same
 * task id, name or key as without them.
 */
class PythonWhitespaceWireTest {

    /** Whitespace to Python's str.strip that Java's String.strip keeps. */
    private static final List<String> PYTHON_ONLY_SPACES = List.of("\u00A0", "\u2007", "\u202F", "\u0085");

    private static ObjectNode claim(HubClient c, String task, String worktree, String path) {
        ObjectNode f = c.frame("claim");
        f.put("task_id", task).put("worktree", worktree).put("ttl_seconds", 60.0);
        if (path != null) {
            f.putArray("paths").add(path);
        }
        return f;
    }

    /** The grant of {@code task}: grants are broadcast, so the other agent's may come first. */
    private static ObjectNode granted(HubClient c, String task) throws Exception {
        return c.await(f -> f.path("type").asText().equals("claim_granted")
                && f.path("task_id").asText().equals(task), WAIT);
    }

    private static List<String> fieldNames(ObjectNode frame) {
        List<String> names = new ArrayList<>();
        frame.fieldNames().forEachRemaining(names::add);
        return names;
    }

    @Test
    void aTaskIdEdgedByPythonWhitespaceIsTheLiveTaskItNames() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient a = hub.agent("p/a");
            HubClient b = hub.agent("p/b");
            for (int i = 0; i < PYTHON_ONLY_SPACES.size(); i++) {
                String space = PYTHON_ONLY_SPACES.get(i);
                String task = "T" + i;
                a.send(claim(a, task, "wa", null));
                granted(a, task);

                b.send(claim(b, space + task + space, "wb", null));
                ObjectNode denied = b.awaitType("claim_denied", WAIT);
                assertThat(denied.path("reason_code").asText()).as("U+%04X", (int) space.charAt(0))
                        .isEqualTo("LEASE_LIVE");
                assertThat(denied.path("task_id").asText()).isEqualTo(task);
                assertThat(denied.path("payload").asText())
                        .isEqualTo("Task '" + task + "' is already claimed by p/a.");
                assertThat(denied.path("target").asText()).isEqualTo("p/b");
                assertThat(fieldNames(denied)).containsExactlyInAnyOrder(
                        "sender", "target", "type", "payload", "timestamp", "hub_id", "task_id", "reason_code");
            }
        }
    }

    /**
     * §7.1 and catalog §12.2: the printable check runs on the raw path, and every whitespace but the
     * ASCII space is non-printable, so {@code "src\u00a0"} widens the claim to its whole worktree
     * (over-claiming, never under-claiming) and so still conflicts with {@code "src"}.
     */
    @Test
    void aPathEdgedByPythonWhitespaceWidensToTheWorktreeAndConflicts() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient a = hub.agent("p/a");
            HubClient b = hub.agent("p/b");
            for (int i = 0; i < PYTHON_ONLY_SPACES.size(); i++) {
                String space = PYTHON_ONLY_SPACES.get(i);
                String worktree = "wt" + i;
                a.send(claim(a, "A" + i, worktree, "src"));
                granted(a, "A" + i);

                b.send(claim(b, "B" + i, worktree, "src" + space));
                ObjectNode denied = b.awaitType("claim_denied", WAIT);
                assertThat(denied.path("reason_code").asText()).as("U+%04X", (int) space.charAt(0))
                        .isEqualTo("SCOPE_CONFLICT");
                assertThat(denied.path("payload").asText())
                        .isEqualTo("Task 'B" + i + "' file scope conflicts with 'A" + i + "' held by p/a.");

                b.send(claim(b, "C" + i, "free" + i, space + "src"));
                ObjectNode widened = granted(b, "C" + i);
                assertThat(widened.path("paths").toString()).isEqualTo("[\"\"]");
            }
        }
    }

    /** §3.1/§4.1: the sender and the type are trimmed before the name check and the routing. */
    @Test
    void theSenderAndTheTypeAreTrimmedOfPythonWhitespace() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient watch = hub.agent("ops/watch");
            HubClient x = hub.connect();
            x.register("\u00A0p/x\u2007", null, WAIT);
            watch.await(f -> "presence_update".equals(f.path("type").asText())
                    && "p/x".equals(f.path("agent").asText()) && "joined".equals(f.path("event").asText()), WAIT);
            ObjectNode c = x.frame("p/x\u0085", "\u00A0claim\u202F");
            c.put("task_id", "TX").put("worktree", "wx");
            x.send(c);
            assertThat(granted(x, "TX").path("owner").asText()).isEqualTo("p/x");
        }
    }

    /** §5.9: a {@code wait_request}'s task id is trimmed as the claim's is. */
    @Test
    void aWaitRequestNamesTheTaskWithoutItsPythonWhitespace() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient a = hub.agent("p/a");
            HubClient b = hub.agent("p/b");
            a.send(claim(a, "TA", "wa", null));
            granted(a, "TA");
            ObjectNode w = b.frame("wait_request");
            w.put("task_id", "\u00A0TA\u2007");
            b.send(w);
            assertThat(b.awaitType("wait_granted", WAIT).path("holder").asText()).isEqualTo("p/a");
        }
    }

    /** §5.10: a resource's kind and name are trimmed, and one of Python whitespace only is missing. */
    @Test
    void aResourceKindAndNameAreTrimmedOfPythonWhitespace() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient a = hub.agent("p/a");
            HubClient b = hub.agent("p/b");
            ObjectNode r = a.frame("resource");
            r.put("kind", "\u00A0gpu\u202F").put("name", "\u0085a100\u2007");
            a.send(r);
            assertThat(b.awaitType("resource_offered", WAIT).path("key").asText()).isEqualTo("p/a:gpu:a100");
            ObjectNode blank = a.frame("resource");
            blank.put("kind", "\u00A0").put("name", "a100");
            a.send(blank);
            assertThat(a.awaitType("error", WAIT).path("error_code").asText()).isEqualTo("kind_required");
        }
    }

    /** §5.15: a card's agent, skills and contract task classes are trimmed, blanks and duplicates dropped. */
    @Test
    void cardMembersAreTrimmedOfPythonWhitespace() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient a = hub.agent("p/a");
            HubClient b = hub.agent("p/b");
            ObjectNode ad = a.frame("advertise");
            ad.put("agent", "\u00A0p/a\u2007");
            ad.putArray("skills").add("\u00A0java\u202F").add("java").add("\u2007");
            ad.putArray("contracts").addObject().put("task", "\u0085build\u00A0");
            a.send(ad);
            ObjectNode card = b.awaitType("capability_advertised", WAIT);
            assertThat(card.path("card").path("agent").asText()).isEqualTo("p/a");
            assertThat(card.path("card").path("skills").toString()).isEqualTo("[\"java\"]");
            assertThat(card.path("card").path("contracts").get(0).path("task_class").asText()).isEqualTo("build");
        }
    }
}
