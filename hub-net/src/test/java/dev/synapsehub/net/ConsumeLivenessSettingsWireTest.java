package dev.synapsehub.net;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.journal.InMemoryJournal;
import dev.synapsehub.core.state.CoordinationState;
import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;

import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The operator's consume-liveness settings over a real socket (contract §8.6, §6.8, §13):
 * {@code --recipient-liveness-window}, {@code --waiter-liveness-window} and
 * {@code --no-warn-stale-recipients}. The hub's clock is set by the test, so windows are crossed
 * by moving it, never by waiting.
 */
class ConsumeLivenessSettingsWireTest {
    private final DarkSeatWireTest.ManualClock clock = new DarkSeatWireTest.ManualClock();

    private TestHub hub(HubConfig.Builder config) throws Exception {
        CoordinationActor actor = new CoordinationActor(new CoordinationState(), new InMemoryJournal(), clock,
                ActorSettings.DEFAULTS);
        actor.start();
        return new TestHub(config, actor, clock);
    }

    /** What the sender got for one directed chat with a receipt: the receipt and any warning before it. */
    private record Outcome(JsonNode receipt, JsonNode warning) {
    }

    private static Outcome chat(HubClient sender, String target) throws Exception {
        sender.clearPending();
        ObjectNode chat = sender.frame("chat");
        chat.put("target", target).put("payload", "are you there").put("receipt_requested", true);
        sender.send(chat);
        JsonNode receipt = sender.awaitType("delivery_receipt", WAIT);
        if (!receipt.path("delivered").asBoolean()) {
            // a negative receipt goes first, the warning after the fan-out
            return new Outcome(receipt, sender.awaitType("recipient_liveness_warning", WAIT));
        }
        JsonNode warning = null;
        for (ObjectNode f : sender.received()) { // a positive receipt comes after any warning
            if ("delivery_receipt".equals(f.path("type").asText())) {
                break;
            }
            if ("recipient_liveness_warning".equals(f.path("type").asText())) {
                warning = f;
            }
        }
        return new Outcome(receipt, warning);
    }

    private static JsonNode who(HubClient c) throws Exception {
        c.send(c.frame("who_request"));
        return c.awaitType("who_snapshot", WAIT);
    }

    /** Asks until {@code name}'s passive declaration shows (it is applied on its own loop). */
    private static void awaitPassive(HubClient observer, String name) throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() < deadline) {
            if ("passive".equals(who(observer).path("wake_capabilities").path(name).asText())) {
                return;
            }
        }
        throw new AssertionError(name + " never showed wake_capability passive");
    }

    @Test
    void aRecipientIsStalePastTheConfiguredReactionWindowNotTheDefault() throws Exception {
        try (TestHub hub = hub(HubConfig.builder().recipientLivenessWindowSeconds(5))) {
            HubClient sender = hub.agent("q/sender");
            HubClient bob = hub.agent("p/bob"); // registered: its reaction is now

            clock.advance(5.0);
            Outcome live = chat(sender, "p/bob");
            assertThat(live.receipt().path("delivered").asBoolean()).as("within the window").isTrue();
            assertThat(live.warning()).isNull();
            assertThat(who(sender).path("agent_liveness").path("p/bob").path("last_reaction_age").asDouble())
                    .isEqualTo(5.0);

            clock.advance(0.001); // past 5 s, far inside the default 90 s
            Outcome stale = chat(sender, "p/bob");
            JsonNode r = stale.receipt();
            assertThat(r.path("delivered").asBoolean()).isFalse();
            assertThat(r.path("reason").asText()).isEqualTo("no_live_recipient");
            assertThat(r.path("dead_lettered").asBoolean()).isTrue();
            assertThat(r.path("stale_recipients").toString()).isEqualTo("[\"p/bob\"]");
            assertThat(stale.warning()).as("the sender is warned").isNotNull();
            assertThat(stale.warning().path("stale_recipients").toString()).isEqualTo("[\"p/bob\"]");
            JsonNode dead = TestHub.state(sender).path("snapshot").path("dead_letters");
            assertThat(dead).hasSize(1);
            assertThat(dead.get(0).path("target").asText()).isEqualTo("p/bob");
            assertThat(bob.awaitType("chat", WAIT).path("payload").asText()).as("still fanned out")
                    .isEqualTo("are you there");
        }
    }

    @Test
    void aWaiterIsLiveOnlyWithinTheConfiguredWaiterWindow() throws Exception {
        try (TestHub hub = hub(HubConfig.builder().waiterLivenessWindowSeconds(3))) {
            HubClient sender = hub.agent("q/sender");
            HubClient bob = hub.agent("p/bob");
            clock.advance(100); // bob's own reaction is past the 90 s window: only a waiter keeps it live
            hub.agent("p/bob-rx"); // seen now, when it registers

            clock.advance(3.0);
            assertThat(who(sender).path("agent_liveness").path("p/bob").path("has_live_waiter").asBoolean())
                    .as("seen 3 s ago").isTrue();
            assertThat(chat(sender, "p/bob").receipt().path("delivered").asBoolean()).isTrue();

            clock.advance(0.001); // past 3 s, far inside the default 20 s
            assertThat(who(sender).path("agent_liveness").path("p/bob").path("has_live_waiter").asBoolean())
                    .isFalse();
            Outcome stale = chat(sender, "p/bob");
            assertThat(stale.receipt().path("delivered").asBoolean()).isFalse();
            assertThat(stale.receipt().path("reason").asText()).isEqualTo("no_live_recipient");
            assertThat(stale.warning()).isNotNull();

            ObjectNode claim = bob.frame("claim"); // the dark-seat monitor uses the same window
            claim.put("task_id", "T1");
            bob.send(claim);
            bob.awaitType("claim_granted", WAIT);
            hub.server.darkSeats().check().get(5, TimeUnit.SECONDS);
            clock.advance(30);
            hub.server.darkSeats().check().get(5, TimeUnit.SECONDS);
            JsonNode alert = sender.await(f -> "dark_seat_alert".equals(f.path("type").asText()), WAIT);
            assertThat(alert.path("identity").asText()).isEqualTo("p/bob");
            assertThat(alert.path("remedy").asText()).contains("heartbeat at least every 3 s");
        }
    }

    @Test
    void withoutStaleRecipientTrackingABoundRecipientIsDeliveredToAsBefore() throws Exception {
        try (TestHub hub = hub(HubConfig.builder().warnStaleRecipients(false))) {
            HubClient sender = hub.agent("q/sender");
            HubClient bob = hub.agent("p/bob");
            clock.advance(1000); // stale by both windows were tracking on

            Outcome o = chat(sender, "p/bob");
            JsonNode r = o.receipt();
            assertThat(r.path("delivered").asBoolean()).isTrue();
            assertThat(r.path("reason").asText()).isEmpty();
            assertThat(r.path("dead_lettered").asBoolean()).isFalse();
            assertThat(r.path("recipients").toString()).isEqualTo("[\"p/bob\"]");
            assertThat(r.path("stale_recipients").toString()).isEqualTo("[]");
            assertThat(o.warning()).as("no recipient_liveness_warning").isNull();
            assertThat(TestHub.state(sender).path("snapshot").path("dead_letters")).isEmpty();
            assertThat(bob.awaitType("chat", WAIT).path("payload").asText()).isEqualTo("are you there");

            JsonNode who = who(sender);
            assertThat(who.has("agent_liveness")).as("§6.8: only while tracking is on").isFalse();
            assertThat(who.path("online_agents").toString()).contains("p/bob");
        }
    }

    @Test
    void withoutStaleRecipientTrackingAPassiveReceiverDrawsNoWarning() throws Exception {
        try (TestHub hub = hub(HubConfig.builder().warnStaleRecipients(false))) {
            HubClient sender = hub.agent("q/sender");
            HubClient rx = hub.connect();
            ObjectNode hb = rx.frame("p/bob-rx", "heartbeat");
            hb.put("payload", "waiting").put("wake_capability", "passive");
            rx.send(hb);
            rx.awaitType("welcome", WAIT);
            awaitPassive(sender, "p/bob-rx");

            Outcome o = chat(sender, "p/bob");
            assertThat(o.receipt().path("delivered").asBoolean()).isTrue();
            assertThat(o.receipt().path("recipient_wake_capabilities").path("p/bob").asText()).isEqualTo("passive");
            assertThat(o.warning()).as("socket delivery is delivery: no liveness warning").isNull();
        }
    }
}
