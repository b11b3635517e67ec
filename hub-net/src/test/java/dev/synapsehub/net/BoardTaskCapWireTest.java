package dev.synapsehub.net;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.board.BoardLimits;
import dev.synapsehub.core.claim.RegistryLimits;
import dev.synapsehub.core.journal.InMemoryJournal;
import dev.synapsehub.core.messaging.MessagingLimits;
import dev.synapsehub.core.resource.ResourceLimits;
import dev.synapsehub.core.state.CoordinationState;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code --board-task-cap} over a real socket (contract §6.5): the reply lists the open tasks
 * and the most recently updated first, re-sorted by id, with {@code total_tasks},
 * {@code truncated} and {@code task_cap}; {@code ready} is never trimmed; without a cap none
 * of those members appear.
 */
class BoardTaskCapWireTest {

    private static TestHub hub(int cap) throws Exception {
        CoordinationActor actor = new CoordinationActor(new CoordinationState(RegistryLimits.DEFAULTS,
                CoordinationState.DEFAULT_IDEMPOTENCY_CAPACITY, new BoardLimits(5000, 1000, 1000, cap),
                ResourceLimits.DEFAULTS, MessagingLimits.DEFAULTS), new InMemoryJournal(), Clock.system(),
                ActorSettings.DEFAULTS);
        actor.start();
        return new TestHub(HubConfig.builder(), actor, Clock.system());
    }

    private static void declare(HubClient c, String id, String status) throws Exception {
        ObjectNode t = c.frame("ledger_task");
        t.put("task_id", id).put("title", id);
        c.send(t);
        c.await(f -> "ledger_task_posted".equals(f.path("type").asText())
                && id.equals(f.path("task").path("task_id").asText()), WAIT);
        if (status != null) {
            ObjectNode u = c.frame("ledger_task_update");
            u.put("task_id", id).put("status", status);
            c.send(u);
            c.await(f -> "ledger_task_updated".equals(f.path("type").asText())
                    && id.equals(f.path("task").path("task_id").asText()), WAIT);
        }
    }

    private static JsonNode board(HubClient c) throws Exception {
        c.send(c.frame("board_request"));
        return c.awaitType("board_snapshot", WAIT).path("board");
    }

    private static List<String> ids(JsonNode tasks) {
        List<String> out = new ArrayList<>();
        tasks.forEach(t -> out.add(t.path("task_id").asText()));
        return out;
    }

    @Test
    void aCappedBoardListsOpenAndRecentTasksAndSaysSo() throws Exception {
        try (TestHub hub = hub(2)) {
            HubClient a = hub.agent("p/a");
            declare(a, "T1", "done");
            declare(a, "T2", null);
            declare(a, "T3", "cancelled");
            declare(a, "T4", "in_progress");
            declare(a, "T5", null);
            JsonNode board = board(a);
            // open/in-progress T2, T4, T5: the two most recently updated are T4 and T5
            assertThat(ids(board.path("tasks"))).containsExactly("T4", "T5");
            assertThat(board.path("ready").toString()).isEqualTo("[\"T2\",\"T5\"]");
            assertThat(board.path("total_tasks").asInt()).isEqualTo(5);
            assertThat(board.path("truncated").asBoolean()).isTrue();
            assertThat(board.path("task_cap").asInt()).isEqualTo(2);
        }
    }

    @Test
    void aBoardWithinItsCapIsWholeAndAnUncappedOneHasNoCapMembers() throws Exception {
        try (TestHub hub = hub(5)) {
            HubClient a = hub.agent("p/a");
            declare(a, "T1", null);
            JsonNode board = board(a);
            assertThat(ids(board.path("tasks"))).containsExactly("T1");
            assertThat(board.path("total_tasks").asInt()).isEqualTo(1);
            assertThat(board.path("truncated").asBoolean()).isFalse();
            assertThat(board.path("task_cap").asInt()).isEqualTo(5);
        }
        try (TestHub hub = hub(0)) {
            HubClient a = hub.agent("p/a");
            declare(a, "T1", null);
            JsonNode board = board(a);
            assertThat(ids(board.path("tasks"))).containsExactly("T1");
            assertThat(board.has("total_tasks") || board.has("truncated") || board.has("task_cap")).isFalse();
        }
    }
}
