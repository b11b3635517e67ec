package dev.synapsehub.net;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Private channels over a real socket (contract A1, decision A10.1): the verbs with their exact
 * texts and rosters, chat scoped to members, receipts, channel history, and channels that
 * survive a restart of a journaled hub.
 */
class ChannelWireTest {

    private static JsonNode verb(HubClient c, String type, String channel, String invitee) throws Exception {
        ObjectNode f = c.frame(type);
        if (channel != null) {
            f.put("channel", channel);
        }
        if (invitee != null) {
            f.put("invitee", invitee);
        }
        c.send(f);
        return c.awaitType("channel_result", WAIT);
    }

    private static List<String> strings(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asText()));
        return out;
    }

    private static void assertResult(JsonNode r, String channel, boolean ok, String payload, List<String> members) {
        assertThat(r.path("payload").asText()).isEqualTo(payload);
        assertThat(r.path("channel").asText()).isEqualTo(channel);
        assertThat(r.path("ok").asBoolean()).isEqualTo(ok);
        assertThat(strings(r.path("members"))).isEqualTo(members);
    }

    private static List<String> list(HubClient c) throws Exception {
        c.send(c.frame("channel_list_request"));
        JsonNode l = c.awaitType("channel_list", WAIT);
        assertThat(l.path("payload").asText()).isEqualTo("channel list");
        return strings(l.path("channels"));
    }

    @Test
    void verbsAnswerWithTheContractsTextsAndRosters() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient ann = hub.agent("ann");
            HubClient bob = hub.agent("bob");
            assertResult(verb(ann, "channel_create", "  ", null), "", false, "invalid channel id", List.of());
            assertResult(verb(ann, "channel_create", "x".repeat(201), null), "x".repeat(201), false,
                    "invalid channel id", List.of());
            String astral = "\uD83D\uDE00".repeat(150); // 150 characters, 300 UTF-16 units (A1.1 counts characters)
            assertResult(verb(ann, "channel_create", astral, null), astral, true, "created channel '" + astral + "'",
                    List.of("ann"));
            assertResult(verb(ann, "channel_leave", astral, null), astral, true, "left '" + astral + "'", List.of());
            assertResult(verb(ann, "channel_create", " ops ", null), "ops", true, "created channel 'ops'",
                    List.of("ann"));
            assertResult(verb(bob, "channel_create", "ops", null), "ops", false, "channel 'ops' already exists",
                    List.of());
            assertResult(verb(bob, "channel_invite", "ops", "carol"), "ops", false,
                    "cannot invite to 'ops': no such channel or you are not its owner", List.of());
            assertResult(verb(ann, "channel_invite", "nope", "bob"), "nope", false,
                    "cannot invite to 'nope': no such channel or you are not its owner", List.of());
            assertResult(verb(ann, "channel_invite", "ops", " "), "ops", false, "invalid invitee", List.of());
            assertResult(verb(ann, "channel_invite", "ops", "ann"), "ops", false,
                    "'ann' is already a member of 'ops'", List.of());
            assertResult(verb(bob, "channel_join", "ops", null), "ops", false,
                    "cannot join 'ops': no such channel or you were not invited", List.of());
            assertResult(verb(ann, "channel_invite", "ops", " bob "), "ops", true, "invited 'bob' to 'ops'",
                    List.of("ann"));
            assertResult(verb(ann, "channel_invite", "ops", "bob"), "ops", false,
                    "'bob' is already invited to 'ops'", List.of());
            assertResult(verb(bob, "channel_join", "ops", null), "ops", true, "joined 'ops'", List.of("ann", "bob"));
            assertResult(verb(bob, "channel_join", "ops", null), "ops", false, "already a member of 'ops'", List.of());
            assertThat(list(bob)).containsExactly("ops");
            assertResult(verb(bob, "channel_leave", "ops", null), "ops", true, "left 'ops'", List.of());
            assertThat(list(bob)).isEmpty();
            assertResult(verb(bob, "channel_leave", "ops", null), "ops", false, "not a member of 'ops'", List.of());
            // the invite was one-shot: a leaver needs a fresh one
            assertResult(verb(bob, "channel_join", "ops", null), "ops", false,
                    "cannot join 'ops': no such channel or you were not invited", List.of());
            // the owner who left can still invite (an empty roster) and rejoin without an invite
            assertResult(verb(ann, "channel_create", "two", null), "two", true, "created channel 'two'",
                    List.of("ann"));
            assertResult(verb(ann, "channel_invite", "two", "bob"), "two", true, "invited 'bob' to 'two'",
                    List.of("ann"));
            assertResult(verb(bob, "channel_join", "two", null), "two", true, "joined 'two'", List.of("ann", "bob"));
            assertResult(verb(ann, "channel_leave", "two", null), "two", true, "left 'two'", List.of());
            assertResult(verb(ann, "channel_invite", "two", "carol"), "two", true, "invited 'carol' to 'two'",
                    List.of());
            assertResult(verb(ann, "channel_join", "two", null), "two", true, "joined 'two'", List.of("ann", "bob"));
            // the last member out deletes the channel, and its id is free for anyone
            assertResult(verb(ann, "channel_leave", "ops", null), "ops", true, "left 'ops'", List.of());
            assertResult(verb(ann, "channel_leave", "ops", null), "ops", false, "channel 'ops' does not exist",
                    List.of());
            assertResult(verb(bob, "channel_create", "ops", null), "ops", true, "created channel 'ops'",
                    List.of("bob"));
            assertThat(list(ann)).containsExactly("two");
            assertThat(list(bob)).containsExactly("ops", "two");
        }
    }

    /** An invitee no agent could bind (too long, or a control character) is the contract's invalid invitee. */
    @Test
    void anInviteeThatCouldNeverJoinIsInvalid() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient ann = hub.agent("ann");
            verb(ann, "channel_create", "ops", null);
            assertResult(verb(ann, "channel_invite", "ops", "x".repeat(64 * 1024)), "ops", false, "invalid invitee",
                    List.of());
            assertResult(verb(ann, "channel_invite", "ops", "bob\u0007"), "ops", false, "invalid invitee", List.of());
            assertResult(verb(ann, "channel_invite", "ops", "b\u200Bob"), "ops", false, "invalid invitee", List.of());
            assertResult(verb(ann, "channel_invite", "ops", "b".repeat(256)), "ops", true,
                    "invited '" + "b".repeat(256) + "' to 'ops'", List.of("ann"));
        }
    }

    /** A1.1/A1.4: ids are trimmed as Python's str.strip trims (U+00A0, U+2007, U+202F, U+0085 too). */
    @Test
    void channelIdsAreTrimmedOfPythonWhitespace() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient ann = hub.agent("ann");
            HubClient bob = hub.agent("bob");
            assertResult(verb(ann, "channel_create", "\u00A0ops\u00A0", null), "ops", true, "created channel 'ops'",
                    List.of("ann"));
            assertResult(verb(ann, "channel_create", "\u2007\u202F\u0085", null), "", false, "invalid channel id",
                    List.of());
            assertResult(verb(ann, "channel_invite", "\u202Fops", "\u00A0bob\u2007"), "ops", true,
                    "invited 'bob' to 'ops'", List.of("ann"));
            assertResult(verb(bob, "channel_join", "ops\u0085", null), "ops", true, "joined 'ops'",
                    List.of("ann", "bob"));
            bob.clearPending();
            ObjectNode chat = ann.frame("chat");
            chat.put("channel", "\u00A0ops").put("payload", "in channel");
            ann.send(chat);
            assertThat(bob.awaitType("chat", WAIT).path("channel").asText()).isEqualTo("\u00A0ops"); // echoed as sent
            HubClient eve = hub.agent("eve");
            ObjectNode intrude = eve.frame("chat");
            intrude.put("channel", "\u00A0ops\u202F").put("payload", "let me in");
            eve.send(intrude);
            assertThat(eve.awaitType("error", WAIT).path("channel").asText()).isEqualTo("ops");
            // a channel of Python whitespace only is an ordinary public chat (A1.4)
            bob.clearPending();
            ObjectNode open = eve.frame("chat");
            open.put("channel", "\u00A0").put("payload", "public");
            eve.send(open);
            assertThat(bob.awaitType("chat", WAIT).path("payload").asText()).isEqualTo("public");
        }
    }

    @Test
    void channelChatReachesOtherOnlineMembersOnlyWithReceiptAndHistory() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient ann = hub.agent("ann");
            HubClient bob = hub.agent("bob");
            HubClient eve = hub.agent("eve");
            verb(ann, "channel_create", "ops", null);
            verb(ann, "channel_invite", "ops", "bob");
            verb(bob, "channel_join", "ops", null);
            ann.clearPending();
            bob.clearPending();
            eve.clearPending();

            ObjectNode chat = ann.frame("chat");
            chat.put("channel", " ops ").put("target", "eve").put("payload", "secret").put("receipt_requested", true)
                    .put("client_msg_id", "c1").put("seq", 7);
            ann.send(chat);
            JsonNode got = bob.awaitType("chat", WAIT);
            assertThat(got.path("payload").asText()).isEqualTo("secret");
            assertThat(got.path("channel").asText()).isEqualTo(" ops "); // echoed untrimmed
            assertThat(got.path("target").asText()).isEqualTo("eve"); // echoed, not routed
            assertThat(got.path("seq").asInt()).isEqualTo(7); // the client's own seq passes through
            JsonNode receipt = ann.awaitType("delivery_receipt", WAIT);
            assertThat(receipt.path("payload").asText()).isEqualTo("delivered to bob");
            assertThat(receipt.path("message_target").asText()).isEqualTo("ops");
            assertThat(strings(receipt.path("recipients"))).containsExactly("bob");
            assertThat(strings(receipt.path("matched_recipients"))).containsExactly("bob");
            assertThat(strings(receipt.path("stale_recipients"))).isEmpty();
            assertThat(receipt.path("dead_lettered").asBoolean(true)).isFalse();
            assertThat(receipt.has("message_seq")).isFalse();
            assertThat(receipt.path("client_msg_id").asText()).isEqualTo("c1");

            // a non-member is refused with the channel named; nothing reaches the members
            ObjectNode intrude = eve.frame("chat");
            intrude.put("channel", "ops").put("payload", "let me in");
            eve.send(intrude);
            JsonNode e = eve.awaitType("error", WAIT);
            assertThat(e.path("payload").asText()).isEqualTo("not a member of channel 'ops'");
            assertThat(e.path("channel").asText()).isEqualTo("ops");

            // channel history for members; the same refusal shape for a non-member
            ObjectNode h = bob.frame("channel_history_request");
            h.put("channel", "ops");
            bob.send(h);
            JsonNode history = bob.awaitType("channel_history", WAIT);
            assertThat(history.path("payload").asText()).isEqualTo("channel history");
            assertThat(history.path("messages")).hasSize(1);
            assertThat(history.path("messages").get(0).path("payload").asText()).isEqualTo("secret");
            assertThat(history.path("messages").get(0).has("msg_id")).isTrue();
            assertThat(history.path("retention").path("max_messages").asInt()).isPositive();
            ObjectNode eh = eve.frame("channel_history_request");
            eh.put("channel", "ops");
            eve.send(eh);
            assertResult(eve.awaitType("channel_result", WAIT), "ops", false, "not a member of channel 'ops'",
                    List.of());

            // a channel chat stays out of the public history
            eve.send(eve.frame("history_request"));
            JsonNode pub = eve.awaitType("history_snapshot", WAIT);
            pub.path("history").forEach(m -> assertThat(m.path("payload").asText()).isNotEqualTo("secret"));

            // a leaver gets nothing more and is refused like any non-member
            verb(bob, "channel_leave", "ops", null);
            ObjectNode alone = ann.frame("chat");
            alone.put("channel", "ops").put("payload", "anyone?").put("receipt_requested", true);
            ann.send(alone);
            JsonNode failed = ann.awaitType("delivery_receipt", WAIT);
            assertThat(failed.path("payload").asText()).isEqualTo("delivery failed: no online recipient matched ops");
            assertThat(failed.path("reason").asText()).isEqualTo("no_online_recipient");
            assertThat(failed.path("delivered").asBoolean(true)).isFalse();
            ObjectNode back = bob.frame("chat");
            back.put("channel", "ops").put("payload", "still here");
            bob.send(back);
            assertThat(bob.awaitType("error", WAIT).path("payload").asText())
                    .isEqualTo("not a member of channel 'ops'");
            // eve and bob saw none of the channel chats, ann saw no echo
            for (HubClient c : List.of(eve, bob, ann)) {
                for (ObjectNode f : c.received()) {
                    if ("chat".equals(f.path("type").asText())) {
                        assertThat(c).isSameAs(bob);
                        assertThat(f.path("payload").asText()).isEqualTo("secret");
                    }
                }
            }
        }
    }

    @Test
    void aPassiveSidecarMakesTheMemberPassiveInTheReceipt() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient ann = hub.agent("ann");
            HubClient bob = hub.agent("bob");
            HubClient rx = hub.connect();
            ObjectNode hb = rx.frame("bob-rx", "heartbeat");
            hb.put("payload", "online").put("wake_capability", "passive");
            rx.send(hb);
            rx.awaitType("welcome", WAIT);
            verb(ann, "channel_create", "ops", null);
            verb(ann, "channel_invite", "ops", "bob");
            verb(bob, "channel_join", "ops", null);
            long deadline = System.nanoTime() + WAIT.toNanos();
            JsonNode receipt = null;
            for (int i = 0; i < 1000 && System.nanoTime() < deadline; i++) {
                ObjectNode chat = ann.frame("chat");
                chat.put("channel", "ops").put("payload", "ping " + i).put("receipt_requested", true);
                ann.send(chat);
                receipt = ann.awaitType("delivery_receipt", WAIT);
                if ("passive".equals(receipt.path("recipient_wake_capabilities").path("bob").asText())) {
                    break;
                }
            }
            assertThat(receipt.path("recipient_wake_capabilities").path("bob").asText()).isEqualTo("passive");
            assertThat(receipt.path("payload").asText()).isEqualTo("delivered to bob (passive receiver)");
            assertThat(strings(receipt.path("recipients"))).containsExactly("bob");
        }
    }

    @Test
    void aChannelHistoryReplyKeepsTheNewestChatsThatFitInOneFrame() throws Exception {
        try (TestHub hub = new TestHub(dev.synapsehub.net.HubConfig.builder().maxFrameBytes(16 * 1024))) {
            HubClient ann = hub.agent("ann");
            verb(ann, "channel_create", "big", null);
            String kilobytes = "x".repeat(3000);
            for (int i = 0; i < 10; i++) { // 10 chats of about 3 KB: far more than one 16 KB frame
                ObjectNode chat = ann.frame("chat");
                chat.put("channel", "big").put("payload", i + kilobytes);
                ann.send(chat);
            }
            ObjectNode h = ann.frame("channel_history_request");
            h.put("channel", "big").put("limit", 10);
            JsonNode history;
            do { // the chats are committed in order: ask until the last is in the history
                ann.clearPending();
                ann.send(h);
                history = ann.awaitType("channel_history", WAIT);
            } while (!history.path("messages").get(history.path("messages").size() - 1).path("payload").asText()
                    .startsWith("9"));
            assertThat(history.toString().length()).as("one frame's worth").isLessThanOrEqualTo(16 * 1024);
            assertThat(history.path("messages").size()).isBetween(1, 5);
            assertThat(history.path("truncated").asBoolean()).isTrue();
        }
    }

    @Test
    void channelsMembershipAndHistorySurviveARestart(@TempDir Path dir) throws Exception {
        Path db = dir.resolve("hub.db");
        try (TestHub hub = TestHub.journaled(db)) {
            HubClient ann = hub.agent("ann");
            HubClient bob = hub.agent("bob");
            verb(ann, "channel_create", "ops", null);
            verb(ann, "channel_invite", "ops", "bob");
            verb(bob, "channel_join", "ops", null);
            verb(ann, "channel_invite", "ops", "carol");
            ObjectNode chat = ann.frame("chat");
            chat.put("channel", "ops").put("payload", "kept");
            ann.send(chat);
            JsonNode live = bob.awaitType("chat", WAIT);
            assertThat(live.has("seq")).isFalse(); // no hub seq on a channel chat, even journaled
        }
        try (TestHub hub = TestHub.journaled(db)) {
            HubClient ann = hub.agent("ann");
            HubClient carol = hub.agent("carol");
            assertThat(list(ann)).containsExactly("ops");
            ObjectNode h = ann.frame("channel_history_request");
            h.put("channel", "ops");
            ann.send(h);
            JsonNode history = ann.awaitType("channel_history", WAIT);
            assertThat(history.path("messages")).hasSize(1);
            assertThat(history.path("messages").get(0).path("payload").asText()).isEqualTo("kept");
            // the pending invite survived too
            assertResult(verb(carol, "channel_join", "ops", null), "ops", true, "joined 'ops'",
                    List.of("ann", "bob", "carol"));
            // and the channel chat did not leak into public history on replay
            carol.send(carol.frame("history_request"));
            JsonNode pub = carol.awaitType("history_snapshot", WAIT);
            pub.path("history").forEach(m -> assertThat(m.path("payload").asText()).isNotEqualTo("kept"));
        }
    }
}
