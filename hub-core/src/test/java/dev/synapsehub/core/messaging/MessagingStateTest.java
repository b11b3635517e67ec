package dev.synapsehub.core.messaging;

import dev.synapsehub.core.board.BoardLimits;
import dev.synapsehub.core.claim.Decision;
import dev.synapsehub.core.claim.RegistryLimits;
import dev.synapsehub.core.command.AckCommand;
import dev.synapsehub.core.command.AgentActivityCommand;
import dev.synapsehub.core.command.ChatCommand;
import dev.synapsehub.core.command.Command;
import dev.synapsehub.core.command.MailboxCursorCommand;
import dev.synapsehub.core.event.ChatEvent;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.event.DeadLetterEscalationEvent;
import dev.synapsehub.core.event.DeliveryReceiptDeferredEvent;
import dev.synapsehub.core.event.DeliveryReceiptExpiredEvent;
import dev.synapsehub.core.event.Durability;
import dev.synapsehub.core.event.MailboxWatermarkEvent;
import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.core.reply.ChatReply;
import dev.synapsehub.core.reply.MailboxReply;
import dev.synapsehub.core.resource.ResourceLimits;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.core.state.StateImage;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class MessagingStateTest {
    private static final ChatFrameRenderer FRAME = s -> "{\"msg_id\":" + s.msgId() + ",\"timestamp\":" + s.hubTimestamp() + "}";

    /** Everything observable about messaging, for equality after replay and rollback. */
    record View(List<ChatRecord> history, List<DeadLetter> deadLetters, Map<String, Long> watermarks,
            Map<String, Integer> pending, List<PendingReceipt> receipts, long msgCounter, long lastSeq) {
        static View of(CoordinationState s, double t) {
            MessagingRegistry m = s.messaging();
            return new View(m.history(null), m.deadLetters(t), m.watermarks(), m.mailboxPending(),
                    m.pendingReceipts(), m.msgCounter(), s.lastSeq());
        }
    }

    private final List<JournaledEvent> journal = new ArrayList<>();

    private Decision run(CoordinationState s, Command c, double t) {
        Decision d = s.decide(c, t);
        for (CoordinationEvent e : d.events()) {
            s.apply(e);
            journal.add(new JournaledEvent(s.lastSeq(), e));
        }
        return d;
    }

    private static ChatCommand chat(String from, String to, boolean receipt, List<OnlineAgent> online) {
        return new ChatCommand(from, to, null, null, null, receipt, online, FRAME);
    }

    private ChatReply send(CoordinationState s, String from, String to, boolean receipt, double t, OnlineAgent... online) {
        return (ChatReply) run(s, chat(from, to, receipt, List.of(online)), t).reply();
    }

    private long seqOfMsg(long msgId) {
        for (JournaledEvent j : journal) {
            if (j.event() instanceof ChatEvent c && c.msgId() == msgId) {
                return j.seq();
            }
        }
        throw new AssertionError("no chat " + msgId);
    }

    private MailboxReply ack(CoordinationState s, String agent, String identity, long seq, double t) {
        return (MailboxReply) run(s, new AckCommand(agent, identity, List.of(), seq, null), t).reply();
    }

    @Test
    void hubClockStampsAndClientTimeIsAdvisory() {
        CoordinationState s = new CoordinationState();
        Decision d = run(s, new ChatCommand("A", null, null, 1e12, " id-1 ", false, List.of(OnlineAgent.live("B")),
                FRAME), 100);
        ChatReply r = (ChatReply) d.reply();
        assertThat(r.stamp()).isEqualTo(new ChatStamp(1, 100, 1e12, "id-1"));
        assertThat(r.frameJson()).isEqualTo("{\"msg_id\":1,\"timestamp\":100.0}");
        assertThat(r.verdict().delivered()).isTrue();
        assertThat(r.directed()).isFalse();
        assertThat(d.events()).hasSize(1);
        assertThat(d.events().get(0).kind()).isEqualTo("chat");
        assertThat(d.events().get(0).durability()).isEqualTo(Durability.NORMAL);
        r = (ChatReply) run(s, new ChatCommand("A", "all", null, Double.NaN, "id-1", false, List.of(), FRAME), 50)
                .reply();
        assertThat(r.stamp()).isEqualTo(new ChatStamp(2, 100, null, "id-1"));
        assertThat(r.verdict().reason()).isEqualTo("no_online_recipient");
        assertThat(r.verdict().deadLettered()).isFalse();
        // At-least-once: the same client_msg_id twice is two chats, nothing suppressed.
        assertThat(s.messaging().history(null)).extracting(ChatRecord::msgId).containsExactly(1L, 2L);
        assertThat(s.messaging().deadLetters(100)).isEmpty();
    }

    @Test
    void offlineAgentMailboxScenario() {
        CoordinationState s = new CoordinationState();
        OnlineAgent carolAway = OnlineAgent.live("DAVE");
        ChatReply m1 = send(s, "ALICE", "BOB", true, 10, carolAway);
        send(s, "ALICE", "all", false, 11, carolAway);
        send(s, "ALICE", "BOB", false, 12, carolAway);
        send(s, "ALICE", "CAROL", false, 13, carolAway);
        send(s, "ALICE", "BOB", false, 14, carolAway);
        assertThat(m1.verdict().delivered()).isFalse();
        assertThat(m1.verdict().reason()).isEqualTo("no_online_recipient");
        assertThat(m1.verdict().deadLettered()).isTrue();
        assertThat(journal).extracting(j -> j.event().kind()).startsWith("chat", "delivery_receipt_requested",
                "delivery_receipt_immediate", "chat");
        assertThat(journal.get(1).event().durability()).isEqualTo(Durability.FULL);
        assertThat(s.messaging().deadLetters(20)).containsExactly(
                new DeadLetter("BOB", 3, 14, "ALICE"), new DeadLetter("CAROL", 1, 13, "ALICE"));
        assertThat(s.messaging().mailboxPending()).containsEntry("BOB", 3).containsEntry("CAROL", 1);
        assertThat(s.messaging().pendingReceipts()).hasSize(1);

        long s1 = seqOfMsg(1);
        long sBroadcast = seqOfMsg(2);
        long s3 = seqOfMsg(3);
        long sCarol = seqOfMsg(4);
        long s5 = seqOfMsg(5);
        // Acks of messages not really directed to BOB move nothing.
        assertThat(ack(s, "BOB", null, sBroadcast, 20).advanced()).isFalse();
        assertThat(ack(s, "BOB", null, sCarol, 20).advanced()).isFalse();
        assertThat(ack(s, "BOB", null, 9_999, 20).advanced()).isFalse();
        // A spoofing non-recipient gets nothing and settles nothing.
        MailboxReply mallory = ack(s, "MALLORY", null, s1, 20);
        assertThat(mallory.advanced()).isFalse();
        assertThat(mallory.deferredReceipt()).isNull();
        assertThat(s.messaging().watermark("BOB")).isZero();
        // BOB's genuine ack of m1 advances its watermark and turns the receipt deferred.
        int before = journal.size();
        MailboxReply bob = ack(s, "BOB", null, s1, 21);
        assertThat(bob.advanced()).isTrue();
        assertThat(bob.watermark()).isEqualTo(s1);
        assertThat(bob.deferredReceipt()).isEqualTo(new DeliveryReceiptDeferredEvent(21, "ALICE", "BOB", 1, s1,
                List.of("BOB"), "BOB", null));
        assertThat(journal.subList(before, journal.size())).extracting(j -> j.event().kind())
                .containsExactly("mailbox_watermark", "delivery_receipt_deferred");
        assertThat(((MailboxWatermarkEvent) journal.get(before).event()).source())
                .isEqualTo(MailboxWatermarkEvent.Source.ACK);
        assertThat(s.messaging().pendingReceipts()).isEmpty();
        assertThat(s.messaging().mailboxPending()).containsEntry("BOB", 2);
        // The sidecar acks on BOB's behalf (mailbox_for), up to the last: pending drops to 0.
        assertThat(ack(s, "BOB-rx", "BOB", s5, 22).advanced()).isTrue();
        assertThat(s.messaging().mailboxPending()).containsEntry("BOB", 0);
        assertThat(ack(s, "BOB", null, s3, 23).advanced()).isFalse();
        assertThat(s.messaging().watermark("BOB")).isEqualTo(s5);
        // BOB comes back: activity clears its dead-letter entry, CAROL's stays.
        run(s, new AgentActivityCommand("BOB"), 24);
        assertThat(s.messaging().deadLetters(24)).containsExactly(new DeadLetter("CAROL", 1, 13, "ALICE"));
        assertThat(run(s, new AgentActivityCommand("BOB"), 25).events()).isEmpty();

        // Replay equivalence: the same events on a fresh state give the identical view.
        CoordinationState replayed = new CoordinationState();
        journal.forEach(replayed::apply);
        assertThat(View.of(replayed, 30)).isEqualTo(View.of(s, 30));
    }

    @Test
    void liveButStaleRecipientDeadLettersAndDeliveredAckLeavesNothingPending() {
        CoordinationState s = new CoordinationState();
        ChatReply stale = send(s, "A", "BOB", true, 1, new OnlineAgent("BOB", List.of(), false, null));
        assertThat(stale.verdict().delivered()).isFalse();
        assertThat(stale.verdict().reason()).isEqualTo("no_live_recipient");
        assertThat(stale.verdict().staleRecipients()).containsExactly("BOB");
        assertThat(s.messaging().deadLetters(1)).extracting(DeadLetter::target).containsExactly("BOB");
        ChatReply live = send(s, "A", "BOB", true, 2, OnlineAgent.live("BOB"));
        assertThat(live.verdict().delivered()).isTrue();
        assertThat(live.verdict().recipients()).containsExactly("BOB");
        assertThat(s.messaging().pendingReceipts()).hasSize(1);
        // A receipt-requested broadcast that reached nobody is never pending.
        send(s, "A", "all", true, 3);
        assertThat(s.messaging().pendingReceipts()).hasSize(1);
    }

    @Test
    void cursorAdvancesMonotonicallyUpToTheLastSeq() {
        CoordinationState s = new CoordinationState();
        send(s, "A", "BOB", false, 1);
        send(s, "A", "BOB", false, 2);
        long last = s.lastSeq();
        MailboxReply r = (MailboxReply) run(s, new MailboxCursorCommand("BOB", null, 1_000_000), 3).reply();
        assertThat(r.advanced()).isTrue();
        assertThat(r.watermark()).isEqualTo(last);
        assertThat(((MailboxWatermarkEvent) journal.get(journal.size() - 1).event()).source())
                .isEqualTo(MailboxWatermarkEvent.Source.CURSOR);
        assertThat(s.messaging().mailboxPending()).containsEntry("BOB", 0);
        assertThat(run(s, new MailboxCursorCommand("BOB", " ", 1), 4).events()).isEmpty();
        assertThat(s.messaging().watermark("BOB")).isEqualTo(last);
    }

    @Test
    void escalationEveryNthDeadLetterIsAnAuditEvent() {
        CoordinationState s = state(new MessagingLimits(100, 200, MessagingLimits.SEVEN_DAYS, 2, 512, 100, 100, 10));
        assertThat(send(s, "A", "GONE", false, 1).escalation()).isNull();
        ChatReply second = send(s, "B", "GONE", false, 2);
        assertThat(second.escalation()).isEqualTo(new DeadLetterEscalationEvent(2, "GONE", 2, "B", 2));
        assertThat(second.escalation().durability()).isEqualTo(Durability.FULL);
        assertThat(send(s, "A", "GONE", false, 3).escalation()).isNull();
        assertThat(send(s, "A", "GONE", false, 4).escalation().count()).isEqualTo(4);
    }

    @Test
    void deadLettersAreBoundedAndForgottenAfterSevenDays() {
        CoordinationState s = state(new MessagingLimits(100, 3, MessagingLimits.SEVEN_DAYS, 0, 512, 100, 100, 10));
        for (int i = 0; i < 5; i++) {
            send(s, "A", "T" + i, false, i);
        }
        assertThat(s.messaging().deadLetters(10)).extracting(DeadLetter::target).containsExactly("T2", "T3", "T4");
        assertThat(s.messaging().deadLetters(2 + MessagingLimits.SEVEN_DAYS + 0.5))
                .extracting(DeadLetter::target).containsExactly("T3", "T4");
        send(s, "A", "T4", false, 4 + MessagingLimits.SEVEN_DAYS + 1);
        assertThat(s.messaging().deadLetters(4 + MessagingLimits.SEVEN_DAYS + 1))
                .containsExactly(new DeadLetter("T4", 1, 4 + MessagingLimits.SEVEN_DAYS + 1, "A"));
    }

    @Test
    void boundsHoldAfterReplayOfMoreEventsThanTheBounds() {
        MessagingLimits small = new MessagingLimits(5, 3, MessagingLimits.SEVEN_DAYS, 3, 2, 4, 3, 2);
        CoordinationState live = state(small);
        List<DeliveryReceiptExpiredEvent> expired = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            String to = i % 4 == 0 ? "all" : "P" + (i % 5) + (i % 7 == 0 ? ",Q" : "");
            ChatReply r = send(live, "S" + (i % 3), to, i % 2 == 1, i, OnlineAgent.live("P1"));
            expired.addAll(r.expiredReceipts());
            if (i % 9 == 0) {
                ack(live, "P2", null, live.lastSeq() - 1, i);
                run(live, new MailboxCursorCommand("P" + (i % 5), null, live.lastSeq() - 3), i);
            }
        }
        assertThat(expired).isNotEmpty();
        assertThat(expired.get(0).reason()).isEqualTo(MessagingRegistry.EVICTED);
        CoordinationState replayed = state(small);
        journal.forEach(replayed::apply);
        View view = View.of(replayed, 100);
        assertThat(view).isEqualTo(View.of(live, 100));
        assertThat(view.history()).hasSize(5);
        assertThat(view.history().get(4).msgId()).isEqualTo(60);
        assertThat(view.deadLetters()).hasSizeLessThanOrEqualTo(3);
        assertThat(view.pending()).hasSizeLessThanOrEqualTo(2);
        assertThat(view.pending().values()).allMatch(n -> n <= 4);
        assertThat(view.watermarks()).hasSizeLessThanOrEqualTo(3);
        assertThat(view.receipts()).hasSizeLessThanOrEqualTo(2);
        assertThat(replayed.messaging().msgCounter()).isEqualTo(60);
    }

    @Test
    void anIdentityPushedOutOfTheProjectionKeepsItsPendingChatsForRetention() {
        MessagingLimits two = new MessagingLimits(100, 10, MessagingLimits.SEVEN_DAYS, 0, 2, 100, 100, 10);
        CoordinationState live = state(two);
        send(live, "A", "BOB", false, 1);
        long toBob = live.lastSeq();
        // three other identities move their watermarks: the projection (2 identities) pushes BOB out
        for (String w : List.of("W1", "W2", "W3")) {
            run(live, new MailboxCursorCommand(w, null, live.lastSeq()), 2);
        }
        assertThat(live.messaging().mailboxPending()).as("what who shows stays bounded (contract M1)")
                .containsOnlyKeys("W2", "W3");
        assertThat(live.image().messaging().pending()).as("BOB's chat still holds retention")
                .contains(new StateImage.Pending("BOB", List.of(toBob)));

        CoordinationState restored = state(two);
        restored.restore(live.image());
        assertThat(restored.image().messaging()).isEqualTo(live.image().messaging());
        CoordinationState replayed = state(two);
        journal.forEach(replayed::apply);
        assertThat(replayed.image().messaging()).isEqualTo(live.image().messaging());

        send(live, "A", "BOB", false, 3);
        assertThat(live.messaging().mailboxPending()).as("back with its true count").containsEntry("BOB", 2);
        ack(live, "BOB", null, live.lastSeq(), 4);
        assertThat(live.image().messaging().pending()).filteredOn(p -> p.identity().equals("BOB"))
                .singleElement().satisfies(p -> assertThat(p.seqs()).isEmpty());

        // parked identities are bounded too: beyond two, the longest parked is dropped and counted
        StateImage.Messaging beforeBatch = live.image().messaging();
        live.beginBatch();
        for (String to : List.of("C1", "C2", "C3", "C4", "C5")) {
            send(live, "A", to, false, 5);
        }
        live.rollbackBatch();
        assertThat(live.image().messaging()).as("a rolled-back batch parks and drops nothing").isEqualTo(beforeBatch);
        assertThat(live.messaging().mailboxDroppedWithPending()).isZero();
        for (String to : List.of("C1", "C2", "C3", "C4", "C5")) {
            send(live, "A", to, false, 5);
        }
        assertThat(live.messaging().mailboxDroppedWithPending()).isEqualTo(1);
        assertThat(live.image().messaging().pending()).extracting(StateImage.Pending::identity)
                .containsExactly("C2", "C3", "C4", "C5");
    }

    @Test
    void rollbackRestoresExactly() {
        MessagingLimits small = new MessagingLimits(3, 2, MessagingLimits.SEVEN_DAYS, 2, 2, 2, 2, 1);
        CoordinationState s = state(small);
        send(s, "A", "X", true, 1);
        send(s, "A", "Y", false, 2);
        send(s, "B", "all", false, 3);
        View before = View.of(s, 10);
        s.beginBatch();
        send(s, "A", "Z", true, 4);
        send(s, "C", "X,Y", true, 5);
        ack(s, "X", null, s.lastSeq() - 2, 6);
        run(s, new MailboxCursorCommand("W", null, 100), 7);
        run(s, new AgentActivityCommand("Y"), 8);
        assertThat(View.of(s, 10)).isNotEqualTo(before);
        s.rollbackBatch();
        assertThat(View.of(s, 10)).isEqualTo(before);
        // The next chat gets the next msg_id and the next seq, as if the batch never happened.
        ChatReply next = send(s, "A", "all", false, 9);
        assertThat(next.stamp().msgId()).isEqualTo(4);
        assertThat(s.lastSeq()).isEqualTo(before.lastSeq() + 1);
    }

    @Test
    void historyAndResumeReads() {
        CoordinationState s = state(MessagingLimits.DEFAULTS.withMaxHistory(3));
        for (int i = 0; i < 5; i++) {
            send(s, "A", i % 2 == 0 ? "all" : "B", false, i);
        }
        MessagingRegistry m = s.messaging();
        assertThat(m.history(null)).extracting(ChatRecord::msgId).containsExactly(3L, 4L, 5L);
        assertThat(m.history(0)).extracting(ChatRecord::msgId).containsExactly(5L);
        assertThat(m.history(2)).extracting(ChatRecord::msgId).containsExactly(4L, 5L);
        assertThat(m.history(2, r -> !r.directed())).extracting(ChatRecord::msgId).containsExactly(3L, 5L);
        assertThat(m.resume(3)).extracting(ChatRecord::msgId).containsExactly(4L, 5L);
        assertThat(m.resume(0)).extracting(ChatRecord::msgId).containsExactly(3L, 4L, 5L);
        assertThat(m.directedChat(seqOfMsg(4))).isPresent();
    }

    private static CoordinationState state(MessagingLimits limits) {
        return new CoordinationState(RegistryLimits.DEFAULTS, 1000, BoardLimits.DEFAULTS, ResourceLimits.DEFAULTS,
                limits);
    }
}
