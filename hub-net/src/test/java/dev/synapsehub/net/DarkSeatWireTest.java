package dev.synapsehub.net;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.journal.InMemoryJournal;
import dev.synapsehub.core.state.CoordinationState;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Live waiters and the dark-seat monitor over a real socket (contract §6.8, §8.6, §8.7). The
 * hub's clock is set by the test, for the writer and the edge alike, and each check is run
 * at once instead of waiting for the 5 s schedule (which, running too, sees the same clock and
 * so cannot alert twice): no test waits for time to pass.
 */
class DarkSeatWireTest {
    /** The hub's clock, set by the test. */
    static final class ManualClock implements Clock {
        private volatile double now = 1_800_000_000.0;

        @Override
        public double nowSeconds() {
            return now;
        }

        void advance(double seconds) {
            now += seconds;
        }
    }

    private final ManualClock clock = new ManualClock();

    private TestHub hub() throws Exception {
        CoordinationActor actor = new CoordinationActor(new CoordinationState(), new InMemoryJournal(), clock,
                ActorSettings.DEFAULTS);
        actor.start();
        return new TestHub(HubConfig.builder(), actor, clock);
    }

    private static void check(TestHub hub) throws Exception {
        hub.server.darkSeats().check().get(5, TimeUnit.SECONDS);
    }

    /**
     * Every dark_seat_alert {@code c} has received so far: a state_request is answered from the
     * outbox thread after every broadcast it published before, so its reply closes the list.
     */
    private static List<JsonNode> alerts(HubClient c) throws Exception {
        TestHub.state(c);
        return c.received().stream().filter(f -> "dark_seat_alert".equals(f.path("type").asText()))
                .collect(Collectors.toList());
    }

    private static JsonNode liveness(HubClient c, String name) throws Exception {
        c.send(c.frame("who_request"));
        return c.awaitType("who_snapshot", WAIT).path("agent_liveness").path(name);
    }

    @Test
    void aSeatWithoutALiveWaiterIsAlertedOnceAfterThirtySecondsAndNothingIsReleased() throws Exception {
        try (TestHub hub = hub()) {
            HubClient watch = hub.agent("ops/watch");
            HubClient a = hub.agent("p/a");
            ObjectNode claim = a.frame("claim");
            claim.put("task_id", "T1");
            a.send(claim);
            a.awaitType("claim_granted", WAIT);
            ObjectNode task = watch.frame("ledger_task");
            task.put("task_id", "B1").put("title", "Review").put("suggested_owner", "p/b");
            watch.send(task);
            watch.awaitType("ledger_task_posted", WAIT);
            assertThat(liveness(watch, "p/a").path("has_live_waiter").asBoolean()).isFalse();

            check(hub); // both seats go dark now
            clock.advance(29.999);
            check(hub);
            assertThat(alerts(watch)).as("not before 30 s").isEmpty();
            clock.advance(0.001);
            check(hub);
            List<JsonNode> due = alerts(watch);
            assertThat(due).extracting(f -> f.path("identity").asText()).containsExactly("p/a", "p/b");
            JsonNode forA = due.get(0);
            assertThat(forA.path("target").asText()).isEqualTo("all");
            assertThat(forA.path("claims").toString()).isEqualTo("[\"T1\"]");
            assertThat(forA.path("tasks").toString()).isEqualTo("[]");
            assertThat(forA.path("missing_for_seconds").asDouble()).isEqualTo(30.0);
            assertThat(forA.path("remedy").asText()).contains("p/a-rx");
            assertThat(due.get(1).path("claims").toString()).isEqualTo("[]");
            assertThat(due.get(1).path("tasks").toString()).isEqualTo("[\"B1\"]");
            assertThat(a.await(f -> "dark_seat_alert".equals(f.path("type").asText()), WAIT)
                    .path("identity").asText()).as("broadcast: the owner hears it too").isEqualTo("p/a");

            clock.advance(60);
            check(hub);
            assertThat(alerts(watch)).as("once per episode").hasSize(2);
            JsonNode claims = TestHub.state(watch).path("snapshot").path("active_claims");
            assertThat(claims).hasSize(1);
            assertThat(claims.get(0).path("owner").asText()).as("nothing released").isEqualTo("p/a");

            // a waiter comes: the episode ends; the task done ends p/b's
            HubClient rx = hub.agent("p/a-rx");
            assertThat(liveness(watch, "p/a").path("has_live_waiter").asBoolean()).isTrue();
            ObjectNode done = watch.frame("ledger_task_update");
            done.put("task_id", "B1").put("status", "done");
            watch.send(done);
            watch.awaitType("ledger_task_updated", WAIT);
            check(hub);
            clock.advance(20.001); // the waiter, silent, is no longer live
            assertThat(liveness(watch, "p/a").path("has_live_waiter").asBoolean()).isFalse();
            check(hub); // a new episode for p/a starts
            clock.advance(30);
            check(hub);
            List<JsonNode> all = alerts(watch);
            assertThat(all).extracting(f -> f.path("identity").asText()).containsExactly("p/a", "p/b", "p/a");
            assertThat(all.get(2).path("missing_for_seconds").asDouble()).isEqualTo(30.0);
            assertThat(rx.isOpen()).isTrue();
        }
    }

    @Test
    void aHeartbeatingWaiterKeepsTheSeatLit() throws Exception {
        try (TestHub hub = hub()) {
            HubClient watch = hub.agent("ops/watch");
            HubClient a = hub.agent("p/a");
            HubClient rx = hub.agent("p/a-rx");
            ObjectNode claim = a.frame("claim");
            claim.put("task_id", "T1");
            a.send(claim);
            a.awaitType("claim_granted", WAIT);
            for (int i = 0; i < 8; i++) {
                check(hub);
                clock.advance(10);
                ObjectNode hb = rx.frame("heartbeat");
                hb.put("payload", "waiting");
                rx.send(hb);
                TestHub.state(rx); // the heartbeat was read before this answer
                assertThat(liveness(watch, "p/a").path("has_live_waiter").asBoolean()).isTrue();
            }
            check(hub);
            assertThat(alerts(watch)).as("80 s with a live waiter").isEmpty();
        }
    }
}
