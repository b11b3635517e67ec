package dev.synapsehub.core.channel;

import dev.synapsehub.core.undo.UndoLog;
import dev.synapsehub.core.claim.Decision;
import dev.synapsehub.core.command.ChannelCommand;
import dev.synapsehub.core.command.ChannelCommand.Op;
import dev.synapsehub.core.event.ChatEvent;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.reply.ChannelReply;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The channel registry's decisions, bounds and rollback (contract A1, INV-JA-2, INV-RR-1). */
class ChannelRegistryTest {

    private static ChannelReply run(ChannelRegistry r, String agent, Op op, String channel, String invitee) {
        Decision d = r.decide(new ChannelCommand(agent, op, channel, invitee, null), 1.0);
        d.events().forEach(r::apply);
        return (ChannelReply) d.reply();
    }

    @Test
    void aRefusalHasNoEventsAndChangesNothing() {
        ChannelRegistry r = new ChannelRegistry(5);
        run(r, "ann", Op.CREATE, "ops", null);
        Decision d = r.decide(new ChannelCommand("bob", Op.JOIN, "ops", null, null), 2.0);
        assertThat(d.events()).isEmpty();
        assertThat(((ChannelReply) d.reply()).ok()).isFalse();
        assertThat(r.isMember("ops", "bob")).isFalse();
    }

    @Test
    void theRegistryHoldsAtMost4096Channels() {
        ChannelRegistry r = new ChannelRegistry(5);
        for (int i = 0; i < ChannelRegistry.MAX_CHANNELS; i++) {
            // spread over owners: one agent owns at most MAX_OWNED_PER_AGENT
            assertThat(run(r, "ann" + i / ChannelRegistry.MAX_OWNED_PER_AGENT, Op.CREATE, "c" + i, null).ok()).isTrue();
        }
        ChannelReply full = run(r, "ann", Op.CREATE, "one-more", null);
        assertThat(full.ok()).isFalse();
        assertThat(full.message()).isEqualTo("channel registry is full");
        assertThat(r.size()).isEqualTo(ChannelRegistry.MAX_CHANNELS);
        run(r, "ann0", Op.LEAVE, "c0", null); // the last member out frees a place
        assertThat(run(r, "ann", Op.CREATE, "one-more", null).ok()).isTrue();
    }

    @Test
    void historyKeepsTheMostRecentMaxHistoryChats() {
        ChannelRegistry r = new ChannelRegistry(3);
        run(r, "ann", Op.CREATE, "ops", null);
        for (int i = 1; i <= 5; i++) {
            r.apply(new ChatEvent(i, i, "ann", null, "ops", false, List.of(), "{\"n\":" + i + "}"));
        }
        assertThat(r.channel("ops").orElseThrow().history()).containsExactly("{\"n\":3}", "{\"n\":4}", "{\"n\":5}");
    }

    @Test
    void allHistoriesTogetherKeepAtMostTheirCharacterBoundDroppingTheWrittenChannelsOldestFirst() {
        UndoLog undo = new UndoLog();
        ChannelRegistry r = new ChannelRegistry(100, 100, undo); // 100 chats, 100 characters in all
        run(r, "ann", Op.CREATE, "big", null);
        run(r, "ann", Op.CREATE, "small", null);
        String chat15 = "{\"x\":\"1234567\"}"; // 15 characters
        for (int i = 0; i < 6; i++) {
            r.apply(new ChatEvent(i, i, "ann", null, "big", false, List.of(), chat15)); // 90 characters
        }
        assertThat(r.channel("big").orElseThrow().history()).hasSize(6);
        r.apply(new ChatEvent(7, 7, "ann", null, "small", false, List.of(), chat15)); // 105: over the bound
        // the written channel has nothing older to drop: the one holding the most gives up its oldest
        assertThat(r.channel("small").orElseThrow().history()).hasSize(1);
        assertThat(r.channel("big").orElseThrow().history()).hasSize(5);
        r.apply(new ChatEvent(8, 8, "ann", null, "small", false, List.of(), chat15)); // the written channel first
        assertThat(r.channel("small").orElseThrow().history()).hasSize(1);
        assertThat(r.channel("big").orElseThrow().history()).hasSize(5);

        undo.begin();
        String huge = "{\"x\":\"" + "y".repeat(200) + "\"}";
        r.apply(new ChatEvent(9, 9, "ann", null, "small", false, List.of(), huge));
        assertThat(r.channel("small").orElseThrow().history()).as("a chat alone over the bound stays")
                .containsExactly(huge);
        assertThat(r.channel("big").orElseThrow().history()).isEmpty();
        undo.rollback();
        assertThat(r.channel("big").orElseThrow().history()).hasSize(5);
        r.apply(new ChatEvent(10, 10, "ann", null, "big", false, List.of(), chat15)); // the count after rollback holds
        assertThat(r.channel("big").orElseThrow().history()).hasSize(5);
        assertThat(r.channel("small").orElseThrow().history()).hasSize(1);

        ChannelRegistry restored = new ChannelRegistry(100, 100, new UndoLog());
        restored.restore(r.image());
        restored.apply(new ChatEvent(11, 11, "ann", null, "big", false, List.of(), chat15));
        assertThat(restored.channel("big").orElseThrow().history()).as("a restored registry counts what it holds")
                .hasSize(5);
    }

    @Test
    void aRolledBackBatchLeavesWhatAReplayRebuilds() {
        UndoLog undo = new UndoLog();
        ChannelRegistry live = new ChannelRegistry(5, undo);
        ChannelRegistry replayed = new ChannelRegistry(5);
        List<CoordinationEvent> committed = new java.util.ArrayList<>();
        for (ChannelCommand c : List.of(new ChannelCommand("ann", Op.CREATE, "ops", null, "l"),
                new ChannelCommand("ann", Op.INVITE, "ops", "bob", null),
                new ChannelCommand("bob", Op.JOIN, "ops", null, null))) {
            undo.begin();
            Decision d = live.decide(c, 1.0);
            d.events().forEach(live::apply);
            undo.commit();
            committed.addAll(d.events());
        }
        committed.forEach(replayed::apply);
        undo.begin();
        for (ChannelCommand c : List.of(new ChannelCommand("ann", Op.INVITE, "ops", "carol", null),
                new ChannelCommand("bob", Op.LEAVE, "ops", null, null),
                new ChannelCommand("ann", Op.LEAVE, "ops", null, null),
                new ChannelCommand("eve", Op.CREATE, "ops", null, null))) {
            live.decide(c, 2.0).events().forEach(live::apply);
        }
        live.apply(new ChatEvent(2.0, 9, "eve", null, "ops", false, List.of(), "{}"));
        assertThat(live.channel("ops").orElseThrow().owner()).isEqualTo("eve");
        undo.rollback();
        assertThat(live.image()).isEqualTo(replayed.image());
        assertThat(live.channel("ops").orElseThrow().members()).containsExactly("ann", "bob");
    }

    /** Bytes the current thread allocated so far (HotSpot's per-thread counter). */
    private static long allocated() {
        return ((com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean())
                .getThreadAllocatedBytes(Thread.currentThread().getId());
    }

    /**
     * The writer changes a channel in place: an invite into a channel of 900 invites, or a chat
     * into a history of 5,000, allocates a few hundred bytes, not a copy of the set or history
     * (which made n invites or chats cost the writer n² time). Bytes, not time: deterministic.
     */
    @Test
    void anInviteOrAChatDoesNotCopyTheChannel() {
        java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
        org.junit.jupiter.api.Assumptions.assumeTrue(mx instanceof com.sun.management.ThreadMXBean
                && ((com.sun.management.ThreadMXBean) mx).isThreadAllocatedMemoryEnabled());
        ChannelRegistry r = new ChannelRegistry(10_000);
        run(r, "ann", Op.CREATE, "ops", null);
        for (int i = 0; i < 900; i++) {
            run(r, "ann", Op.INVITE, "ops", "agent-" + i);
        }
        List<ChannelCommand> invites = new java.util.ArrayList<>();
        for (int i = 900; i < 1000; i++) {
            invites.add(new ChannelCommand("ann", Op.INVITE, "ops", "agent-" + i, null));
        }
        long before = allocated();
        for (ChannelCommand c : invites) {
            r.decide(c, 1.0).events().forEach(r::apply);
        }
        long perInvite = (allocated() - before) / invites.size();
        assertThat(r.channel("ops").orElseThrow().invites()).hasSize(1000);
        assertThat(perInvite).as("bytes one invite allocates (a copy of 900 names is ~36 KB)").isLessThan(4_000);

        List<ChatEvent> chats = new java.util.ArrayList<>();
        for (int i = 0; i < 6_000; i++) {
            chats.add(new ChatEvent(i, i, "ann", null, "ops", false, List.of(), "{\"n\":" + i + "}"));
        }
        chats.subList(0, 5_000).forEach(r::apply);
        before = allocated();
        chats.subList(5_000, 6_000).forEach(r::apply);
        long perChat = (allocated() - before) / 1_000;
        assertThat(r.channel("ops").orElseThrow().history()).hasSize(6_000);
        assertThat(perChat).as("bytes one channel chat allocates (a copy of 5,000 frames is ~20 KB)").isLessThan(2_000);
    }

    @Test
    void aChannelHoldsAtMostItsRosterOfMembersAndInvitees() {
        ChannelRegistry r = new ChannelRegistry(5);
        run(r, "owner", Op.CREATE, "c", null);
        int accepted = 0;
        ChannelReply last = null;
        for (int i = 0; i < ChannelRegistry.MAX_ROSTER + 500; i++) {
            last = run(r, "owner", Op.INVITE, "c", "i" + i);
            accepted += last.ok() ? 1 : 0;
        }
        assertThat(accepted).as("the owner plus its invitees fill the roster").isEqualTo(ChannelRegistry.MAX_ROSTER - 1);
        assertThat(r.channel("c").orElseThrow().invites()).hasSize(ChannelRegistry.MAX_ROSTER - 1);
        assertThat(last.message()).isEqualTo("cannot invite to 'c': it already holds 1024 members and invitees");
        assertThat(last.members()).isEmpty();
        // an invitee who joins still counts; one who leaves frees a place
        run(r, "i0", Op.JOIN, "c", null);
        assertThat(run(r, "owner", Op.INVITE, "c", "late").ok()).isFalse();
        run(r, "i0", Op.LEAVE, "c", null);
        assertThat(run(r, "owner", Op.INVITE, "c", "late").ok()).isTrue();
    }

    @Test
    void anInviteeLongerThanAnAgentNameIsInvalidAndALabelIsCut() {
        ChannelRegistry r = new ChannelRegistry(5);
        run(r, "owner", Op.CREATE, "c", null);
        String astral = "\uD83D\uDE00".repeat(ChannelRegistry.MAX_INVITEE_CODE_POINTS); // 256 characters, 512 units
        assertThat(run(r, "owner", Op.INVITE, "c", astral).ok()).isTrue();
        ChannelReply tooLong = run(r, "owner", Op.INVITE, "c", "x".repeat(ChannelRegistry.MAX_INVITEE_CODE_POINTS + 1));
        assertThat(tooLong.message()).isEqualTo("invalid invitee");
        assertThat(r.channel("c").orElseThrow().invites()).containsExactly(astral);

        Decision d = r.decide(new ChannelCommand("owner", Op.CREATE, "big", null, "L".repeat(1_000_000)), 1.0);
        d.events().forEach(r::apply);
        assertThat(r.channel("big").orElseThrow().label()).hasSize(ChannelCommand.MAX_LABEL_CODE_POINTS);
        assertThat(new ChannelCommand("o", Op.CREATE, "x", null, "\uD83D\uDE00".repeat(2000)).label())
                .as("cut on code points, no half surrogate").isEqualTo("\uD83D\uDE00".repeat(ChannelCommand.MAX_LABEL_CODE_POINTS));
    }

    @Test
    void oneAgentOwnsAtMostItsShareOfChannels() {
        UndoLog undo = new UndoLog();
        ChannelRegistry r = new ChannelRegistry(5, undo);
        for (int i = 0; i < ChannelRegistry.MAX_OWNED_PER_AGENT; i++) {
            assertThat(run(r, "hog", Op.CREATE, "c" + i, null).ok()).isTrue();
        }
        ChannelReply refused = run(r, "hog", Op.CREATE, "more", null);
        assertThat(refused.ok()).isFalse();
        assertThat(refused.message()).isEqualTo("cannot create 'more': you already own 256 channels");
        assertThat(r.size()).isEqualTo(ChannelRegistry.MAX_OWNED_PER_AGENT);
        assertThat(run(r, "ann", Op.CREATE, "more", null).ok()).as("another agent still creates").isTrue();

        undo.begin();
        run(r, "hog", Op.LEAVE, "c0", null); // the last member out: the hog owns one fewer
        assertThat(run(r, "hog", Op.CREATE, "again", null).ok()).isTrue();
        undo.rollback();
        assertThat(run(r, "hog", Op.CREATE, "again", null).ok()).as("the rollback restored the count").isFalse();

        ChannelRegistry restored = new ChannelRegistry(5);
        restored.restore(r.image());
        assertThat(run(restored, "hog", Op.CREATE, "again", null).ok()).as("a restore counts owners").isFalse();
    }

    /** A1.1: 1–200 characters, counted as Python counts them (an astral character is one). */
    @Test
    void aChannelIdIsAtMost200CodePoints() {
        ChannelRegistry r = new ChannelRegistry(5);
        String emoji = "\uD83D\uDE00";
        assertThat(run(r, "ann", Op.CREATE, emoji.repeat(200), null).ok()).isTrue();
        ChannelReply tooLong = run(r, "ann", Op.CREATE, emoji.repeat(201), null);
        assertThat(tooLong.message()).isEqualTo("invalid channel id");
        assertThat(run(r, "ann", Op.CREATE, "x".repeat(200), null).ok()).isTrue();
        assertThat(run(r, "ann", Op.CREATE, "x".repeat(201), null).message()).isEqualTo("invalid channel id");
    }
}
