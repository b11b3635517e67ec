package dev.synapsehub.net;

import dev.synapsehub.client.HubClient;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.event.ClaimSnapshotEvent;
import dev.synapsehub.core.event.LedgerProgressEvent;
import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.journal.SqliteJournal;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Apply-once over the wire (INV-CR-1, contract §4.6): a keyed retry is answered from the
 * idempotency ledger before any check that depends on the present moment: who is online (a
 * handoff's recipient after a restart), the rate limit, a busy hub. Also: a handoff and its
 * board note are one decision, journaled together and published note first (§5.7).
 */
class KeyedRetryTest {

    private static ObjectNode keyed(HubClient c, String type, String key) {
        ObjectNode f = c.frame(type);
        f.put("idem_key", key);
        return f;
    }

    private static ObjectNode claim(HubClient c, String task, String path, String key) {
        ObjectNode f = keyed(c, "claim", key);
        f.put("task_id", task).put("worktree", "wt").put("ttl_seconds", 3600);
        f.putArray("paths").add(path);
        return f;
    }

    @Test
    void everyKeyedClaimVerbRetriedAfterARestartGetsItsFirstAnswerEvenWithTheRecipientOffline(@TempDir Path dir)
            throws Exception {
        Path db = dir.resolve("hub.db");
        Map<String, ObjectNode> requests = new TreeMap<>();
        Map<String, String> firstAnswers = new TreeMap<>();
        String claimsBefore;
        try (TestHub hub = TestHub.journaled(db)) {
            HubClient a = hub.agent("p/a");
            HubClient b = hub.agent("p/b");
            for (String task : List.of("T1", "T2", "T3", "T4")) {
                a.send(claim(a, task, "src/" + task, "claim-" + task));
                a.await(f -> "claim_granted".equals(f.path("type").asText()) && task.equals(f.path("task_id").asText()),
                        WAIT);
            }
            ObjectNode handoff = keyed(a, "handoff", "h-1");
            handoff.put("task_id", "T1").put("to_agent", "p/b").put("note", "yours");
            ObjectNode update = keyed(a, "task_update", "u-1");
            update.put("task_id", "T2").put("status", "working").put("expected_version", 0);
            ObjectNode checkpoint = keyed(a, "checkpoint", "c-1");
            checkpoint.put("task_id", "T3").put("checkpoint", "step=7");
            ObjectNode release = keyed(a, "release", "r-1");
            release.put("task_id", "T4");
            requests.put("handoff_granted", handoff);
            requests.put("task_updated", update);
            requests.put("checkpoint_saved", checkpoint);
            requests.put("release_granted", release);
            for (Map.Entry<String, ObjectNode> r : requests.entrySet()) {
                a.clearPending();
                a.send(r.getValue());
                firstAnswers.put(r.getKey(), a.awaitType(r.getKey(), WAIT).toString());
            }
            b.awaitType("handoff_granted", WAIT);
            claimsBefore = TestHub.state(a).path("snapshot").path("active_claims").toString();
        }

        try (TestHub hub = TestHub.journaled(db)) {
            HubClient a = hub.agent("p/a"); // p/b, the handoff's recipient, stays away
            HubClient observer = hub.agent("p/observer");
            a.await(f -> "presence_update".equals(f.path("type").asText())
                    && "p/observer".equals(f.path("agent").asText()), WAIT);
            a.clearPending();
            for (Map.Entry<String, ObjectNode> r : requests.entrySet()) {
                ObjectNode retry = r.getValue().deepCopy();
                retry.put("timestamp", System.currentTimeMillis() / 1000.0);
                a.send(retry);
                ObjectNode answer = a.awaitType(r.getKey(), WAIT);
                assertThat(answer.toString()).as("retry of " + r.getKey()).isEqualTo(firstAnswers.get(r.getKey()));
            }
            assertThat(a.pending()).as("no handoff_denied, no error").isEmpty();
            TestHub.assertQuiet(observer); // replays are private
            assertThat(TestHub.state(a).path("snapshot").path("active_claims").toString()).isEqualTo(claimsBefore);

            // a fresh key is decided now, and now the recipient is not online
            ObjectNode fresh = keyed(a, "handoff", "h-2");
            fresh.put("task_id", "T2").put("to_agent", "p/b");
            a.send(fresh);
            ObjectNode denied = a.awaitType("handoff_denied", WAIT);
            assertThat(denied.path("payload").asText()).isEqualTo("Handoff target 'p/b' is not online.");
            assertThat(denied.path("task_id").asText()).isEqualTo("T2");
        }
    }

    @Test
    void aHandoffAndItsNoteAreOneJournaledDecisionPublishedNoteFirst(@TempDir Path dir) throws Exception {
        Path db = dir.resolve("hub.db");
        try (TestHub hub = TestHub.journaled(db)) {
            HubClient a = hub.agent("p/a");
            HubClient b = hub.agent("p/b");
            a.send(claim(a, "T1", "src/x", "k-claim"));
            a.awaitType("claim_granted", WAIT);
            b.clearPending();
            ObjectNode handoff = a.frame("handoff");
            handoff.put("task_id", "T1").put("to_agent", "p/b").put("note", "your turn");
            a.send(handoff);
            ObjectNode note = b.awaitType("ledger_progress_posted", WAIT);
            assertThat(note.path("note").path("text").asText()).isEqualTo("handed off to p/b: your turn");
            assertThat(note.path("note").path("author").asText()).isEqualTo("p/a");
            ObjectNode granted = b.awaitType("handoff_granted", WAIT);
            List<String> order = new ArrayList<>();
            b.received().forEach(f -> order.add(f.path("type").asText()));
            assertThat(order.indexOf("ledger_progress_posted")).isLessThan(order.indexOf("handoff_granted"));
            assertThat(granted.path("owner").asText()).isEqualTo("p/b");
        }
        SqliteJournal journal = SqliteJournal.open(db);
        try {
            List<JournaledEvent> events = new ArrayList<>();
            journal.replay(events::add);
            int handoffAt = -1;
            for (int i = 0; i < events.size(); i++) {
                if (events.get(i).event() instanceof ClaimSnapshotEvent s && s.change() == ClaimSnapshotEvent.Kind.HANDOFF) {
                    handoffAt = i;
                }
            }
            assertThat(handoffAt).isNotNegative();
            assertThat(events.get(handoffAt + 1).event()).isInstanceOf(LedgerProgressEvent.class);
            assertThat(events.get(handoffAt + 1).seq()).isEqualTo(events.get(handoffAt).seq() + 1);
            assertThat(((LedgerProgressEvent) events.get(handoffAt + 1).event()).note().text())
                    .isEqualTo("handed off to p/b: your turn");
        } finally {
            journal.close();
        }
    }

    @Test
    void aKeyedRetryIsAnsweredBeforeTheRateLimit() throws Exception {
        try (TestHub hub = new TestHub(HubConfig.builder().ratePerSecond(0.01).rateBurst(1))) {
            HubClient a = hub.agent("p/a");
            ObjectNode first = claim(a, "T1", "src/a", "k-1");
            a.send(first);
            String answer = a.awaitType("claim_granted", WAIT).toString();
            a.send(claim(a, "T2", "src/b", "k-2")); // the bucket is empty: this one is refused
            assertThat(a.awaitType("error", WAIT).path("error_code").asText()).isEqualTo("rate_limited");
            a.send(first);
            assertThat(a.awaitType("claim_granted", WAIT).toString()).isEqualTo(answer);
            ObjectNode changed = first.deepCopy();
            changed.put("note", "other");
            a.send(changed);
            assertThat(a.awaitType("error", WAIT).path("error_code").asText()).isEqualTo("idempotency_conflict");
        }
    }

    @Test
    void aKeyedRetryIsAnsweredWhileTheHubIsBusyWithItsBroadcasts() throws Exception {
        // a one-second linger keeps the grant queued for beta; a 1-byte limit makes that a backlog
        HubConfig.Builder config = HubConfig.builder().broadcastLinger(Duration.ofSeconds(1)).maxFanoutBacklogBytes(1);
        try (TestHub hub = new TestHub(config)) {
            HubClient alpha = hub.agent("p/alpha");
            hub.agent("p/beta");
            hub.awaitBroadcastsHandedOut();
            ObjectNode first = claim(alpha, "T1", "src/a", "k-1");
            alpha.send(first);
            String answer = alpha.awaitType("claim_granted", WAIT).toString();
            alpha.send(claim(alpha, "T2", "src/b", "k-2"));
            assertThat(alpha.awaitType("error", WAIT).path("error_code").asText()).isEqualTo("busy");
            alpha.send(first);
            assertThat(alpha.awaitType("claim_granted", WAIT).toString()).isEqualTo(answer);
            assertThat(hub.server.services().metrics().fanoutBusyRefusals.get()).isEqualTo(1);
        }
    }

    @Test
    void aReplayedRetryNeverOvertakesAnEarlierReplyOnItsConnection() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient a = hub.agent("p/a");
            ObjectNode first = claim(a, "T1", "src/a", "k-1");
            a.send(first);
            a.awaitType("claim_granted", WAIT);
            a.clearPending();
            a.send(claim(a, "T2", "src/b", "k-2")); // decided by the actor
            a.send(first);                          // a retry goes through the actor, in order
            a.await(f -> "claim_granted".equals(f.path("type").asText()) && "T1".equals(f.path("task_id").asText()), WAIT);
            List<String> tasks = new ArrayList<>();
            a.received().forEach(f -> tasks.add(f.path("type").asText() + ":" + f.path("task_id").asText()));
            assertThat(tasks).containsSubsequence("claim_granted:T2", "claim_granted:T1");
        }
    }
}
