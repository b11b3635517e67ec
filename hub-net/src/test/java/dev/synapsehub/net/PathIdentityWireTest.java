package dev.synapsehub.net;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.core.state.CoordinationState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code path_identity} object ids (contract §7.7, A8) over real loopback sockets. The client
 * computes each path's object id from its file system (here: device and inode of real files
 * and hard links in a temp dir, as a client would); the hub only compares them: two hard links
 * to one file are one claim scope when both identities share the file-system namespace and the
 * worktree object id, and never otherwise.
 */
class PathIdentityWireTest {
    @TempDir
    Path dir;

    /** One identity row: git path, file-system path, object id, object scope. */
    private record Row(String git, String fs, String objectId, String scope) {
    }

    private static ObjectNode claim(HubClient c, String task, String worktree, String wtId, String ns,
                                    boolean caseSensitive, Row... rows) {
        ObjectNode f = c.frame("claim");
        f.put("task_id", task).put("worktree", worktree);
        ArrayNode paths = f.putArray("paths");
        ObjectNode id = f.putObject("path_identity");
        id.put("version", 1).put("worktree_path", worktree).put("worktree_object_id", wtId)
                .put("filesystem_namespace", ns).put("case_sensitive", caseSensitive);
        ArrayNode idRows = id.putArray("paths");
        for (Row r : rows) {
            paths.add(r.git());
            ObjectNode row = idRows.addObject().put("git_path", r.git()).put("filesystem_path", r.fs());
            if (r.objectId() != null) {
                row.put("object_id", r.objectId());
            }
            if (r.scope() != null) {
                row.put("object_scope", r.scope());
            }
        }
        return f;
    }

    private static ObjectNode send(HubClient c, ObjectNode claim) throws Exception {
        String task = claim.path("task_id").asText();
        c.send(claim);
        return c.await(f -> task.equals(f.path("task_id").asText()) && (("claim_granted".equals(f.path("type").asText())
                && c.name().equals(f.path("owner").asText())) || "claim_denied".equals(f.path("type").asText())), WAIT);
    }

    private static void release(HubClient c, String task, ObjectNode granted) throws Exception {
        ObjectNode r = c.frame("release");
        r.put("task_id", task).put("epoch", granted.path("epoch").asLong());
        c.send(r);
        c.await(f -> "release_granted".equals(f.path("type").asText()) && task.equals(f.path("task_id").asText()), WAIT);
    }

    /** The object id a client derives from the file system: the inode within the device. */
    private static String objectId(Path p) throws Exception {
        return "ino-" + Files.getAttribute(p, "unix:ino");
    }

    private static String namespace(Path p) throws Exception {
        return "dev-" + Files.getAttribute(p, "unix:dev");
    }

    @Test
    void twoHardLinksToOneFileAreOneClaimScope() throws Exception {
        Path worktree = Files.createDirectories(dir.resolve("repo"));
        Path a = Files.writeString(worktree.resolve("a.txt"), "shared");
        Path b = Files.createLink(worktree.resolve("b.txt"), a); // a real hard link
        Path c = Files.writeString(worktree.resolve("c.txt"), "other");
        assertThat(objectId(b)).as("hard links share the file's id").isEqualTo(objectId(a));
        assertThat(objectId(c)).isNotEqualTo(objectId(a));
        String wt = worktree.toString();
        String ns = namespace(worktree);
        String wtId = objectId(worktree);
        try (TestHub hub = TestHub.open()) {
            HubClient alice = hub.agent("p/alice");
            HubClient bob = hub.agent("p/bob");
            ObjectNode granted = send(alice, claim(alice, "T1", wt, wtId, ns, true,
                    new Row("a.txt", a.toString(), objectId(a), null)));
            assertThat(granted.path("type").asText()).isEqualTo("claim_granted");
            JsonNode echo = granted.path("path_identity");
            assertThat(echo.path("worktree_object_id").asText()).isEqualTo(wtId);
            assertThat(echo.path("paths").get(0).path("object_id").asText()).isEqualTo(objectId(a));
            assertThat(echo.path("paths").get(0).path("object_scope").asText()).as("always echoed").isEmpty();

            ObjectNode alias = send(bob, claim(bob, "T2", wt, wtId, ns, true,
                    new Row("b.txt", b.toString(), objectId(b), null)));
            assertThat(alias.path("type").asText()).isEqualTo("claim_denied");
            assertThat(alias.path("reason_code").asText()).isEqualTo("SCOPE_CONFLICT");
            assertThat(alias.path("payload").asText()).isEqualTo("Task 'T2' file scope conflicts with 'T1' held by p/alice.");

            ObjectNode other = send(bob, claim(bob, "T3", wt, wtId, ns, true,
                    new Row("c.txt", c.toString(), objectId(c), null)));
            assertThat(other.path("type").asText()).isEqualTo("claim_granted");

            // without the shared namespace and worktree id the ids are not comparable: different paths
            assertThat(send(bob, claim(bob, "T4", wt, wtId, "", true,
                    new Row("b.txt", b.toString(), objectId(b), null))).path("type").asText()).isEqualTo("claim_granted");
        }
    }

    @Test
    void theContractsScenarioTable() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient alice = hub.agent("p/alice");
            HubClient bob = hub.agent("p/bob");
            int[] n = {0};
            // each scenario: A claims, B claims, B's verdict is checked, both release
            record Case(String name, ObjectNode a, ObjectNode b, String expected) {
            }
            java.util.function.BiFunction<HubClient, Object[], ObjectNode> c = (who, args) -> claim(who,
                    who == alice ? "A" + n[0] : "B" + n[0], (String) args[0], (String) args[1], (String) args[2],
                    (Boolean) args[3], (Row) args[4]);
            Object[][][] table = {
                    // 1 same ns + wt id + object id, different git paths
                    {{"/w", "W", "ns", true, new Row("a.txt", "/w/a.txt", "o1", null)},
                            {"/w", "W", "ns", true, new Row("b.txt", "/w/b.txt", "o1", null)}, {"claim_denied"}},
                    // 2 namespaces differ (also with the same git path)
                    {{"/w", "W", "ns1", true, new Row("a.txt", "/w/a.txt", "o1", null)},
                            {"/w", "W", "ns2", true, new Row("a.txt", "/w/a.txt", "o1", null)}, {"claim_granted"}},
                    // 3 worktree ids differ (also with the same git path)
                    {{"/w", "W1", "ns", true, new Row("a.txt", "/w/a.txt", "o1", null)},
                            {"/w", "W2", "ns", true, new Row("a.txt", "/w/a.txt", "o1", null)}, {"claim_granted"}},
                    // 4 namespaces both empty: ids not comparable, paths differ
                    {{"/w", "W", "", true, new Row("a.txt", "/w/a.txt", "o1", null)},
                            {"/w", "W", "", true, new Row("b.txt", "/w/b.txt", "o1", null)}, {"claim_granted"}},
                    // 5 one worktree id empty
                    {{"/w", "W", "ns", true, new Row("a.txt", "/w/a.txt", "o1", null)},
                            {"/w", "", "ns", true, new Row("b.txt", "/w/b.txt", "o1", null)}, {"claim_granted"}},
                    // 6 object ids differ, same git path
                    {{"/w", "W", "ns", true, new Row("a.txt", "/w/a.txt", "o1", null)},
                            {"/w", "W", "ns", true, new Row("a.txt", "/w/a.txt", "o2", null)}, {"claim_denied"}},
                    // 7 object ids and git paths differ, same file-system path
                    {{"/w", "W", "ns", true, new Row("a.txt", "/w/x", "o1", null)},
                            {"/w", "W", "ns", true, new Row("b.txt", "/w/x", "o2", null)}, {"claim_denied"}},
                    // 8 same object, disjoint semantic scopes
                    {{"/w", "W", "ns", true, new Row("m.py/.synapse-symbol/foo", "/w/m.py", "o1", "foo")},
                            {"/w", "W", "ns", true, new Row("m.py/.synapse-symbol/bar", "/w/m.py", "o1", "bar")},
                            {"claim_granted"}},
                    // 9 same object, one scope "" (the whole object)
                    {{"/w", "W", "ns", true, new Row("m.py/.synapse-symbol/foo", "/w/m.py", "o1", "foo")},
                            {"/w", "W", "ns", true, new Row("m.py", "/w/m.py", "o1", null)}, {"claim_denied"}},
                    // 11 different worktree paths, same ns + wt id, same object id
                    {{"/w", "W", "ns", true, new Row("a.txt", "/w/a.txt", "o1", null)},
                            {"/v", "W", "ns", true, new Row("b.txt", "/v/b.txt", "o1", null)}, {"claim_denied"}},
                    // 12 different worktree paths, same ns + wt id, same git path
                    {{"/w", "W", "ns", true, new Row("a.txt", "/w/a.txt", "o1", null)},
                            {"/v", "W", "ns", true, new Row("a.txt", "/v/a.txt", "o2", null)}, {"claim_denied"}},
                    // 13 different worktree path and wt id, same git path
                    {{"/w", "W1", "ns", true, new Row("a.txt", "/w/a.txt", "o1", null)},
                            {"/v", "W2", "ns", true, new Row("a.txt", "/v/a.txt", "o1", null)}, {"claim_granted"}},
                    // case policy: one case-insensitive side makes A.txt and a.txt one path
                    {{"/w", "", "", true, new Row("A.txt", "/w/A.txt", "", null)},
                            {"/w", "", "", false, new Row("a.txt", "/w/a.txt", "", null)}, {"claim_denied"}},
            };
            for (Object[][] row : table) {
                n[0]++;
                ObjectNode first = send(alice, c.apply(alice, row[0]));
                assertThat(first.path("type").asText()).as("scenario %d, A", n[0]).isEqualTo("claim_granted");
                ObjectNode second = send(bob, c.apply(bob, row[1]));
                assertThat(second.path("type").asText()).as("scenario %d, B: %s", n[0], second).isEqualTo(row[2][0]);
                release(alice, "A" + n[0], first);
                if ("claim_granted".equals(second.path("type").asText())) {
                    release(bob, "B" + n[0], second);
                }
            }
            // 14 / 15: identity against a legacy claim of the same worktree label
            ObjectNode id = send(alice, claim(alice, "L1", "/w", "W", "ns", true, new Row("a.txt", "/w/a.txt", "o1", null)));
            ObjectNode legacySame = bob.frame("claim");
            legacySame.put("task_id", "L2").put("worktree", "/w").putArray("paths").add("a.txt");
            assertThat(send(bob, legacySame).path("type").asText()).isEqualTo("claim_denied");
            ObjectNode legacyAlias = bob.frame("claim");
            legacyAlias.put("task_id", "L3").put("worktree", "/w").putArray("paths").add("b.txt");
            assertThat(send(bob, legacyAlias).path("type").asText()).as("an alias through a legacy claim is not seen")
                    .isEqualTo("claim_granted");
            assertThat(id.path("type").asText()).isEqualTo("claim_granted");
        }
    }

    @Test
    void aCaseInsensitiveIdentitySeesALegacyClaimWhoseWorktreeAndPathDifferOnlyInCase() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient alice = hub.agent("p/alice");
            HubClient bob = hub.agent("p/bob");
            ObjectNode legacy = bob.frame("claim");
            legacy.put("task_id", "L1").put("worktree", "/W").putArray("paths").add("Dir/A.txt");
            assertThat(send(bob, legacy).path("type").asText()).isEqualTo("claim_granted");

            // A8 rules 2 and 3: the legacy label and path, folded with the identity's policy, are its own
            ObjectNode folded = send(alice, claim(alice, "I1", "/w", "W", "ns", false,
                    new Row("dir/a.txt", "/w/dir/a.txt", "o1", null)));
            assertThat(folded.path("type").asText()).as(folded.toString()).isEqualTo("claim_denied");
            assertThat(folded.path("reason_code").asText()).isEqualTo("SCOPE_CONFLICT");
            assertThat(folded.path("payload").asText())
                    .isEqualTo("Task 'I1' file scope conflicts with 'L1' held by p/bob.");
            // another path in that worktree does not conflict
            assertThat(send(alice, claim(alice, "I2", "/w", "W", "ns", false,
                    new Row("dir/b.txt", "/w/dir/b.txt", "o2", null))).path("type").asText()).isEqualTo("claim_granted");
            // a case-sensitive identity: "/w" is not the legacy "/W"
            assertThat(send(alice, claim(alice, "I3", "/w", "W", "ns", true,
                    new Row("dir/a.txt", "/w/dir/a.txt", "o3", null))).path("type").asText()).isEqualTo("claim_granted");
        }
    }

    @Test
    void invalidAndMisalignedIdentitiesAreRefused() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient alice = hub.agent("p/alice");
            ObjectNode spaced = send(alice, claim(alice, "T1", "/w", "W", "ns", true,
                    new Row("a.txt", "/w/a.txt", "o 1", null)));
            assertThat(spaced.path("type").asText()).isEqualTo("claim_denied");
            assertThat(spaced.path("reason_code").asText()).isEqualTo("PATH_IDENTITY_INVALID");
            assertThat(spaced.path("payload").asText()).isEqualTo("Task 'T1' carries an invalid path identity.");

            ObjectNode trailing = claim(alice, "T2", "/w", "", "", true, new Row("a.txt", "/w/a.txt", null, null));
            ((ObjectNode) trailing.get("path_identity")).put("worktree_path", "/w/");
            assertThat(send(alice, trailing).path("reason_code").asText()).isEqualTo("PATH_IDENTITY_INVALID");

            ObjectNode version = claim(alice, "T3", "/w", "", "", true, new Row("a.txt", "/w/a.txt", null, null));
            ((ObjectNode) version.get("path_identity")).put("version", 2);
            assertThat(send(alice, version).path("payload").asText()).isEqualTo("Task 'T3' carries an invalid path identity.");

            ObjectNode misaligned = claim(alice, "T4", "/w", "", "", true, new Row("a.txt", "/w/a.txt", null, null));
            ((ArrayNode) misaligned.get("paths")).set(0, misaligned.textNode("other.txt"));
            ObjectNode m = send(alice, misaligned);
            assertThat(m.path("reason_code").asText()).isEqualTo("PATH_IDENTITY_INVALID");
            assertThat(m.path("payload").asText()).isEqualTo("Task 'T4' path identity does not match its declared scope.");

            ObjectNode scopeless = claim(alice, "T5", "/w", "", "", true, new Row("a.txt", "/w/a.txt", "o1", "foo"));
            assertThat(send(alice, scopeless).path("payload").asText()).as("a scope only on a semantic path")
                    .isEqualTo("Task 'T5' carries an invalid path identity.");
            assertThat(TestHub.state(alice).path("snapshot").path("active_claims")).isEmpty();
        }
    }

    @Test
    void identitiesSurviveARestartWithDb() throws Exception {
        Path db = dir.resolve("hub.db");
        try (TestHub hub = new TestHub(HubConfig.builder(), db, CoordinationState::new)) {
            HubClient alice = hub.agent("p/alice");
            assertThat(send(alice, claim(alice, "T1", "/w", "W", "ns", true,
                    new Row("a.txt", "/w/a.txt", "o1", null))).path("type").asText()).isEqualTo("claim_granted");
        }
        try (TestHub hub = new TestHub(HubConfig.builder(), db, CoordinationState::new)) {
            HubClient bob = hub.agent("p/bob");
            ObjectNode alias = send(bob, claim(bob, "T2", "/w", "W", "ns", true, new Row("b.txt", "/w/b.txt", "o1", null)));
            assertThat(alias.path("reason_code").asText()).as(alias.toString()).isEqualTo("SCOPE_CONFLICT");
            JsonNode active = TestHub.state(bob).path("snapshot").path("active_claims");
            assertThat(active.toString()).contains("\"object_id\":\"o1\"");
        }
    }
}
