package dev.synapsehub.net;

import dev.synapsehub.client.HubClient;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.Clock;
import dev.synapsehub.journal.DurableCoordination;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Restart with a journal, over the wire: a hub on a SQLite journal serves claims, updates,
 * checkpoints, a handoff and a keyed claim; server and actor stop; a new hub replays the same
 * file. Claims, epochs, versions and checkpoints survive, the epoch counter goes on, and a
 * retried {@code idem_key} gets the first answer verbatim (contract §4.6, issue 4 Tests).
 */
class DurableRestartTest {
    private static final String FIRST_HUB = "syn-0000aaaa";
    private static final String SECOND_HUB = "syn-0000bbbb";

    private static ObjectNode claim(HubClient c, String task, String worktree, String path) {
        ObjectNode f = c.frame("claim");
        f.put("task_id", task).put("worktree", worktree).put("ttl_seconds", 3600).put("note", "n-" + task);
        f.putArray("paths").add(path);
        return f;
    }

    private static JsonNode claimOf(JsonNode activeClaims, String task) {
        for (JsonNode c : activeClaims) {
            if (task.equals(c.path("task_id").asText())) {
                return c;
            }
        }
        throw new AssertionError("no active claim " + task + " in " + activeClaims);
    }

    @Test
    void claimsEpochsVersionsCheckpointsAndIdempotencySurviveARestart(@TempDir Path dir) throws Exception {
        Path db = dir.resolve("hub.db");
        JsonNode claimsBefore;
        ObjectNode keyed;
        String firstAnswer;
        long e1;
        long e3;
        long e4;

        DurableCoordination first = DurableCoordination.open(db, Clock.system());
        try (TestHub hub = new TestHub(HubConfig.builder().hubId(FIRST_HUB), first.actor(), Clock.system())) {
            HubClient a = hub.agent("p/a");
            HubClient b = hub.agent("p/b");
            a.send(claim(a, "T1", "w1", "src/one"));
            e1 = a.awaitType("claim_granted", WAIT).path("epoch").asLong();
            ObjectNode upd = a.frame("task_update");
            upd.put("task_id", "T1").put("status", "working").put("expected_version", 0);
            a.send(upd);
            assertThat(a.awaitType("task_updated", WAIT).path("version").asInt()).isEqualTo(1);
            ObjectNode cp = a.frame("checkpoint");
            cp.put("task_id", "T1").put("checkpoint", "step=3").put("epoch", e1);
            a.send(cp);
            assertThat(a.awaitType("checkpoint_saved", WAIT).path("version").asInt()).isEqualTo(2);

            a.send(claim(a, "T2", "w2", "src/two"));
            long e2 = a.awaitType("claim_granted", WAIT).path("epoch").asLong();
            ObjectNode h = a.frame("handoff");
            h.put("task_id", "T2").put("to_agent", "p/b").put("epoch", e2);
            a.send(h);
            e3 = b.awaitType("handoff_granted", WAIT).path("epoch").asLong();
            assertThat(e3).isGreaterThan(e2);

            keyed = claim(a, "T3", "w3", "src/three");
            keyed.put("idem_key", "k-3");
            a.send(keyed);
            ObjectNode granted = a.awaitType("claim_granted", WAIT);
            e4 = granted.path("epoch").asLong();
            firstAnswer = granted.toString();
            assertThat(granted.path("hub_id").asText()).isEqualTo(FIRST_HUB);
            claimsBefore = TestHub.state(a).path("snapshot").path("active_claims");
            assertThat(claimsBefore).hasSize(3);
        } // clients, server, then the actor (which lets the last append finish and closes the journal)

        DurableCoordination second = DurableCoordination.open(db, Clock.system());
        assertThat(second.replay().clean()).isTrue();
        assertThat(second.replay().replayed()).isPositive();
        try (TestHub hub = new TestHub(HubConfig.builder().hubId(SECOND_HUB), second.actor(), Clock.system())) {
            HubClient a = hub.agent("p/a");
            HubClient b = hub.agent("p/b");
            a.awaitType("presence_update", WAIT); // b joined
            JsonNode claimsAfter = TestHub.state(a).path("snapshot").path("active_claims");
            assertThat(claimsAfter).isEqualTo(claimsBefore); // owners, epochs, versions, checkpoints, leases
            JsonNode t1 = claimOf(claimsAfter, "T1");
            assertThat(t1.path("epoch").asLong()).isEqualTo(e1);
            assertThat(t1.path("version").asInt()).isEqualTo(2);
            assertThat(t1.path("status").asText()).isEqualTo("working");
            assertThat(t1.path("checkpoint").asText()).isEqualTo("step=3");
            JsonNode t2 = claimOf(claimsAfter, "T2");
            assertThat(t2.path("owner").asText()).isEqualTo("p/b");
            assertThat(t2.path("epoch").asLong()).isEqualTo(e3);

            // the retry gets the first answer verbatim (old hub_id and timestamp), privately
            ObjectNode retry = keyed.deepCopy();
            retry.put("timestamp", System.currentTimeMillis() / 1000.0);
            a.send(retry);
            ObjectNode replayed = a.awaitType("claim_granted", WAIT);
            assertThat(replayed.toString()).isEqualTo(firstAnswer);
            assertThat(replayed.path("hub_id").asText()).isEqualTo(FIRST_HUB);
            // a changed request under the same key: conflict, nothing applied
            ObjectNode changed = keyed.deepCopy();
            changed.put("note", "something else");
            a.send(changed);
            ObjectNode conflict = a.awaitType("error", WAIT);
            assertThat(conflict.path("error_code").asText()).isEqualTo("idempotency_conflict");
            assertThat(conflict.path("hub_id").asText()).isEqualTo(FIRST_HUB);
            assertThat(conflict.path("timestamp").asDouble()).isEqualTo(replayed.path("timestamp").asDouble());
            TestHub.assertQuiet(b); // neither the replay nor the conflict was broadcast
            assertThat(TestHub.state(a).path("snapshot").path("active_claims")).isEqualTo(claimsBefore);

            // the version guard and the epoch counter carry on from the journal
            ObjectNode stale = a.frame("task_update");
            stale.put("task_id", "T1").put("status", "done").put("expected_version", 1);
            a.send(stale);
            a.awaitType("error", WAIT);
            ObjectNode next = a.frame("task_update");
            next.put("task_id", "T1").put("status", "done").put("expected_version", 2).put("epoch", e1);
            a.send(next);
            assertThat(a.awaitType("task_updated", WAIT).path("version").asInt()).isEqualTo(3);
            a.send(claim(a, "T5", "w5", "src/five"));
            ObjectNode fresh = a.awaitType("claim_granted", WAIT);
            assertThat(fresh.path("epoch").asLong()).isGreaterThan(e4);
            assertThat(fresh.path("hub_id").asText()).isEqualTo(SECOND_HUB);
        }
    }
}
