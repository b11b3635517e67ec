package dev.synapsehub.net;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Delivery receipts name each logical recipient's wake capability (contract A7): live waiters
 * ({@code X-rx}, {@code X-pane-rx}) and project waiter seats ({@code P-rx} for bare {@code P}),
 * and a directed chat that reached only passive receivers is preceded by the warning. Also the
 * channel chat refusal (A1.4) this hub gives while it has no channel verbs.
 */
class WakeCapabilityReceiptWireTest {
    private static final String PASSIVE_WARNING = " reached only a passive receiver — socket delivery does not prove"
            + " an agent pane was woken; a directed message may sit unread";

    /** What the sender received for one chat with a receipt: the receipt and any warning before it. */
    private record Outcome(JsonNode receipt, JsonNode warning) {
        List<String> recipients() {
            List<String> out = new ArrayList<>();
            receipt.path("recipients").forEach(n -> out.add(n.asText()));
            return out;
        }

        Map<String, String> wake() {
            Map<String, String> out = new TreeMap<>();
            receipt.path("recipient_wake_capabilities").fields()
                    .forEachRemaining(e -> out.put(e.getKey(), e.getValue().asText()));
            return out;
        }
    }

    private static HubClient seat(TestHub hub, HubClient observer, String name, String wake) throws Exception {
        HubClient c = hub.connect();
        ObjectNode hb = c.frame(name, "heartbeat");
        hb.put("payload", "online");
        if (wake != null) {
            hb.put("wake_capability", wake);
        }
        c.send(hb);
        c.awaitType("welcome", WAIT);
        if (wake != null) {
            awaitDeclared(observer, name, wake.strip().toLowerCase(java.util.Locale.ROOT).replace('-', '_'));
        } else {
            observer.await(f -> "presence_update".equals(f.path("type").asText())
                    && name.equals(f.path("agent").asText()) && "joined".equals(f.path("event").asText()), WAIT);
        }
        return c;
    }

    /** Polls who_snapshot until {@code name} shows {@code wake} (the declaration is applied on its own loop). */
    private static void awaitDeclared(HubClient observer, String name, String wake) throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        for (int i = 0; i < 100_000 && System.nanoTime() < deadline; i++) {
            observer.send(observer.frame("who_request"));
            JsonNode who = observer.awaitType("who_snapshot", WAIT);
            // who_snapshot leaves an unknown (or cleared) declaration out
            if (wake.equals(who.path("wake_capabilities").path(name).asText("unknown"))) {
                return;
            }
        }
        throw new AssertionError(name + " never showed wake_capability " + wake);
    }

    private static Outcome send(HubClient sender, String target) throws Exception {
        sender.clearPending();
        ObjectNode chat = sender.frame("chat");
        chat.put("target", target).put("payload", "wake up").put("receipt_requested", true);
        sender.send(chat);
        JsonNode receipt = sender.awaitType("delivery_receipt", WAIT);
        JsonNode warning = null;
        for (ObjectNode f : sender.received()) {
            if ("delivery_receipt".equals(f.path("type").asText())) {
                break;
            }
            if ("recipient_liveness_warning".equals(f.path("type").asText())) {
                warning = f;
            }
        }
        return new Outcome(receipt, warning);
    }

    @Test
    void aLogicalRecipientTakesItsOwnDeclarationThenItsPaneBridgeThenItsWaiter() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient sender = hub.agent("q/sender");
            seat(hub, sender, "proj/alice-rx", "passive");
            Outcome a = send(sender, "proj/alice");
            assertThat(a.recipients()).containsExactly("proj/alice");
            assertThat(a.wake()).containsExactly(Map.entry("proj/alice", "passive"));
            assertThat(a.warning()).as("a warning before the receipt").isNotNull();
            assertThat(a.warning().path("payload").asText()).isEqualTo("proj/alice" + PASSIVE_WARNING);
            assertThat(a.warning().path("passive_recipients").toString()).isEqualTo("[\"proj/alice\"]");
            assertThat(a.receipt().path("payload").asText()).isEqualTo("delivered to proj/alice (passive receiver)");

            seat(hub, sender, "proj/alice-pane-rx", "pane-bridge");
            Outcome b = send(sender, "proj/alice");
            assertThat(b.recipients()).containsExactly("proj/alice");
            assertThat(b.wake()).containsExactly(Map.entry("proj/alice", "pane_bridge"));
            assertThat(b.warning()).isNull();
            assertThat(b.receipt().path("payload").asText()).isEqualTo("delivered to proj/alice (pane bridge)");

            HubClient alice = seat(hub, sender, "proj/alice", null);
            assertThat(send(sender, "proj/alice").wake()).containsExactly(Map.entry("proj/alice", "pane_bridge"));

            ObjectNode keepalive = alice.frame("proj/alice", "heartbeat");
            keepalive.put("wake_capability", " Direct ");
            alice.send(keepalive);
            awaitDeclared(sender, "proj/alice", "direct");
            Outcome d = send(sender, "proj/alice");
            assertThat(d.wake()).containsExactly(Map.entry("proj/alice", "direct"));
            assertThat(d.warning()).isNull();
            assertThat(d.receipt().path("payload").asText()).isEqualTo("delivered to proj/alice (direct agent)");
        }
    }

    /** A7: the declaration is trimmed as Python trims (U+00A0, U+2007, U+202F, U+0085 too). */
    @Test
    void aDeclarationIsTrimmedOfPythonWhitespace() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient sender = hub.agent("q/sender");
            HubClient alice = seat(hub, sender, "proj/alice", null);
            ObjectNode keepalive = alice.frame("proj/alice", "heartbeat");
            keepalive.put("wake_capability", "\u00A0Direct\u2007\u202F\u0085");
            alice.send(keepalive);
            awaitDeclared(sender, "proj/alice", "direct");
        }
    }

    /** A7: "{@code 5}/{@code "wake"}/{@code null} → cleared"; a heartbeat without the member keeps it. */
    @Test
    void aNullOrNonStringDeclarationClearsAndAnAbsentOneKeeps() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient sender = hub.agent("q/sender");
            HubClient bob = seat(hub, sender, "p/bob", "direct");
            ObjectNode keep = bob.frame("p/bob", "heartbeat");
            keep.put("payload", "alive");
            bob.send(keep);
            bob.send(bob.frame("p/bob", "who_request")); // answered after the heartbeat on the same socket
            assertThat(bob.awaitType("who_snapshot", WAIT).path("wake_capabilities").path("p/bob").asText())
                    .as("a heartbeat without the member keeps the declaration").isEqualTo("direct");
            ObjectNode cleared = bob.frame("p/bob", "heartbeat");
            cleared.put("payload", "alive").putNull("wake_capability");
            bob.send(cleared);
            awaitDeclared(sender, "p/bob", "unknown");
            Outcome o = send(sender, "p/bob");
            assertThat(o.wake()).containsExactly(Map.entry("p/bob", "unknown"));
            assertThat(o.receipt().path("payload").asText()).isEqualTo("delivered to p/bob");

            ObjectNode again = bob.frame("p/bob", "heartbeat");
            again.put("wake_capability", "passive");
            bob.send(again);
            awaitDeclared(sender, "p/bob", "passive");
            ObjectNode five = bob.frame("p/bob", "heartbeat");
            five.put("wake_capability", 5);
            bob.send(five);
            awaitDeclared(sender, "p/bob", "unknown");
        }
    }

    @Test
    void aProjectWaiterSeatStandsForTheBareProject() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient sender = hub.agent("q/sender");
            seat(hub, sender, "proj-rx", "passive");
            Outcome a = send(sender, "proj");
            assertThat(a.recipients()).containsExactly("proj");
            assertThat(a.wake()).containsExactly(Map.entry("proj", "passive"));
            assertThat(a.warning()).isNotNull();

            seat(hub, sender, "proj/seat-rx", "passive");
            Outcome b = send(sender, "proj");
            assertThat(b.recipients()).containsExactly("proj", "proj/seat");
            assertThat(b.wake()).containsExactly(Map.entry("proj", "passive"), Map.entry("proj/seat", "passive"));
            assertThat(b.warning().path("payload").asText()).isEqualTo("proj, proj/seat" + PASSIVE_WARNING);

            Outcome c = send(sender, "proj/seat");
            assertThat(c.recipients()).containsExactly("proj/seat");
            assertThat(c.wake()).containsExactly(Map.entry("proj/seat", "passive"));
            assertThat(c.warning()).isNotNull();

            seat(hub, sender, "proj/direct", "direct");
            Outcome d = send(sender, "proj");
            assertThat(d.recipients()).containsExactly("proj", "proj/direct", "proj/seat");
            assertThat(d.wake()).containsEntry("proj/direct", "direct");
            assertThat(d.warning().path("passive_recipients").toString()).isEqualTo("[\"proj\",\"proj/seat\"]");

            Outcome e = send(sender, "proj/*");
            assertThat(e.recipients()).containsExactly("proj/direct", "proj/seat");
            assertThat(e.warning()).as("not directed: no warning").isNull();
        }
    }

    @Test
    void aChannelChatIsRefusedAndReachesNobody() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient alice = hub.agent("p/alice");
            HubClient bob = hub.agent("p/bob");
            bob.clearPending();
            ObjectNode chat = alice.frame("chat");
            chat.put("target", "p/bob").put("channel", "  ops  ").put("payload", "secret");
            alice.send(chat);
            ObjectNode e = alice.awaitType("error", WAIT);
            assertThat(e.path("payload").asText()).isEqualTo("not a member of channel 'ops'");
            assertThat(e.path("channel").asText()).isEqualTo("ops");
            assertThat(e.path("target").asText()).isEqualTo("p/alice");

            ObjectNode open = alice.frame("chat");
            open.put("target", "all").put("channel", "").put("payload", "public");
            alice.send(open);
            ObjectNode got = bob.await(f -> "chat".equals(f.path("type").asText()), WAIT);
            assertThat(got.path("payload").asText()).as("the refused chat never arrived first").isEqualTo("public");
            assertThat(got.path("channel").asText()).isEmpty();
            assertThat(got.has("channel")).as("channel \"\" is echoed").isTrue();
            for (ObjectNode f : bob.received()) {
                assertThat(f.toString()).doesNotContain("secret");
            }
        }
    }
}
