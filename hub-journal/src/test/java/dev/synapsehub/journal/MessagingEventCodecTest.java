package dev.synapsehub.journal;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.synapsehub.core.board.BoardStatus;
import dev.synapsehub.core.board.BoardTask;
import dev.synapsehub.core.board.NoteKind;
import dev.synapsehub.core.board.ProgressNote;
import dev.synapsehub.core.event.ChatEvent;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.event.DeadLetterClearedEvent;
import dev.synapsehub.core.event.DeadLetterEscalationEvent;
import dev.synapsehub.core.event.DeliveryReceiptDeferredEvent;
import dev.synapsehub.core.event.DeliveryReceiptExpiredEvent;
import dev.synapsehub.core.event.DeliveryReceiptImmediateEvent;
import dev.synapsehub.core.event.DeliveryReceiptRequestedEvent;
import dev.synapsehub.core.event.LedgerProgressEvent;
import dev.synapsehub.core.event.LedgerTaskEvent;
import dev.synapsehub.core.event.MailboxWatermarkEvent;
import dev.synapsehub.core.event.ResourceOfferedEvent;
import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.core.messaging.ReceiptVerdict;
import dev.synapsehub.core.resource.ResourceOffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class MessagingEventCodecTest {
    private static final double TS = 1_795_976_357.8186054;
    private final EventCodec codec = new EventCodec();
    private final ObjectMapper mapper = new ObjectMapper();

    private CoordinationEvent roundTrip(CoordinationEvent event) throws Exception {
        String payload = codec.encode(event);
        assertThat(payload).as("compact ASCII-only JSON").matches("\\A[\\x20-\\x7e]*\\z");
        assertThat(codec.knows(event.kind())).isTrue();
        return codec.decode(event.kind(), event.ts(), payload).orElseThrow();
    }

    static List<CoordinationEvent> samples() {
        String frame = "{\"sender\":\"p/alpha\",\"target\":\"p/beta\",\"type\":\"chat\",\"payload\":\"hi\","
                + "\"timestamp\":1795976357.8186054,\"priority\":\"high\",\"metadata\":{\"a\":[1,2.5]},"
                + "\"client_timestamp\":1795976357.8179355,\"hub_id\":\"syn-1\",\"msg_id\":7,\"client_msg_id\":\"m-1\"}";
        ReceiptVerdict verdict = new ReceiptVerdict(false, List.of(), List.of("p/beta"), List.of("p/beta"),
                "no_live_recipient", true, Map.of("p/beta", "passive"));
        return List.of(
                new ChatEvent(TS, 7, "p/alpha", "p/beta", null, true, List.of("p/beta"), frame),
                new ChatEvent(TS, 8, "p/alpha", null, null, false, List.of(),
                        "{\"sender\":\"p/alpha\",\"type\":\"chat\",\"payload\":{\"x\":null},\"timestamp\":1.5,\"hub_id\":\"h\",\"msg_id\":8}"),
                new ChatEvent(TS, 9, "p/alpha", "all", "ops", false, List.of(),
                        "{\"sender\":\"p/alpha\",\"target\":\"all\",\"channel\":\"ops\",\"type\":\"chat\",\"msg_id\":9}"),
                new LedgerTaskEvent(TS, new BoardTask("T-1", "Title", "desc", List.of("T-0", "T-2"),
                        BoardStatus.IN_PROGRESS, "p/beta", "p", 3, "p/alpha", TS - 10, TS), null),
                new LedgerTaskEvent(TS, new BoardTask("T-2", "t", "", List.of(), BoardStatus.OPEN, "", "", 1, "a", TS, TS),
                        "{\"hub_id\":\"syn-1\",\"seq\":4,\"event_fingerprint\":\"" + "a".repeat(64) + "\"}"),
                new LedgerProgressEvent(TS, new ProgressNote("T-1", "p/alpha", NoteKind.ASSESSMENT, "went well", TS)),
                new LedgerProgressEvent(TS, new ProgressNote("", "p/alpha", NoteKind.NOTE, "", TS)),
                new ResourceOfferedEvent(TS, new ResourceOffer("p/alpha", "gpu", "a100", 4,
                        "{\"region\":\"eu\",\"n\":1.25}", TS)),
                new DeliveryReceiptRequestedEvent(TS, "p/alpha", "p/beta", 7, 40, "m-1"),
                new DeliveryReceiptRequestedEvent(TS, "p/alpha", "p/beta", 7, 40, null),
                new DeliveryReceiptImmediateEvent(TS, "p/alpha", "p/beta", 7, 40, verdict, "m-1"),
                new DeliveryReceiptImmediateEvent(TS, "p/alpha", "p/beta,p/gamma", 7, 40,
                        new ReceiptVerdict(true, List.of("p/beta"), List.of("p/beta"), List.of(), "", false,
                                Map.of("p/beta", "direct")), null),
                new DeliveryReceiptDeferredEvent(TS, "p/alpha", "p/beta", 7, 40, List.of("p/beta"), "p/beta", "m-1"),
                new DeliveryReceiptExpiredEvent(TS, "p/alpha", "p/beta", 7, 40, "pending_window_evicted", null),
                new MailboxWatermarkEvent(TS, "p/beta", 40, MailboxWatermarkEvent.Source.ACK),
                new MailboxWatermarkEvent(TS, "p/beta", 12, MailboxWatermarkEvent.Source.CURSOR),
                new DeadLetterEscalationEvent(TS, "p/beta", 10, "p/alpha", 5),
                new DeadLetterClearedEvent(TS, "p/beta"),
                new dev.synapsehub.core.event.ReceiptsDeliveredEvent(TS, "p/alpha", List.of("delivery-receipt:4:deferred")),
                new dev.synapsehub.core.event.CapabilityCardEvent(TS, "p/alpha", "{\"agent\":\"p/alpha\",\"meta\":{}}"),
                new dev.synapsehub.core.event.CapabilityCardRemovedEvent(TS, "p/alpha"));
    }

    @Test
    void everyMessagingKindRoundTrips() throws Exception {
        Set<String> kinds = new java.util.TreeSet<>();
        for (CoordinationEvent e : samples()) {
            assertThat(roundTrip(e)).as(e.kind()).isEqualTo(e);
            kinds.add(e.kind());
        }
        assertThat(kinds).isEqualTo(new java.util.TreeSet<>(MessagingEventCodec.KINDS));
    }

    @Test
    void chatPayloadIsTheFrameWithoutSeqPlusHubMembersLast() throws Exception {
        ChatEvent chat = (ChatEvent) samples().get(0);
        String payload = codec.encode(chat);
        assertThat(payload).startsWith(chat.frameJson().substring(0, chat.frameJson().length() - 1))
                .endsWith(",\"_dead_lettered\":true,\"_addressees\":[\"p/beta\"]}");
        assertThat(mapper.readTree(payload).has("seq")).isFalse();
    }

    @Test
    void clientMembersNamedLikeHubMembersDoNotConfuseDecoding() throws Exception {
        String frame = "{\"sender\":\"x\",\"target\":\"y\",\"type\":\"chat\",\"_dead_lettered\":\"spoof\","
                + "\"_addressees\":[\"evil\"],\"msg_id\":3}";
        ChatEvent chat = new ChatEvent(TS, 3, "x", "y", null, false, List.of("y"), frame);
        assertThat(roundTrip(chat)).isEqualTo(chat);
    }

    @Test
    void nonAsciiChatSurvivesAsTheSameJsonValue() throws Exception {
        String frame = "{\"sender\":\"\u00e9\",\"target\":\"b\",\"type\":\"chat\",\"payload\":\"\u4e2d \uD83D\uDE00\",\"msg_id\":1}";
        ChatEvent chat = new ChatEvent(TS, 1, "\u00e9", "b", null, false, List.of("b"), frame);
        ChatEvent back = (ChatEvent) roundTrip(chat);
        assertThat(mapper.readTree(back.frameJson())).isEqualTo(mapper.readTree(frame));
        assertThat(back.sender()).isEqualTo("\u00e9");
    }

    @Test
    void referenceChatRowWithoutHubMembersDecodes() throws Exception {
        String row = "{\"sender\":\"a\",\"target\":\"b\",\"type\":\"chat\",\"payload\":\"p\",\"timestamp\":1.5,"
                + "\"hub_id\":\"h\",\"msg_id\":3}";
        ChatEvent e = (ChatEvent) codec.decode("chat", 1.5, row).orElseThrow();
        assertThat(e.frameJson()).isEqualTo(row);
        assertThat(e.msgId()).isEqualTo(3);
        assertThat(e.deadLettered()).isFalse();
    }

    @Test
    void contractMemberNames() throws Exception {
        assertThat(mapper.readTree(codec.encode(samples().get(10))).fieldNames()).toIterable().containsExactly(
                "sender", "target", "message_id", "message_seq", "delivered", "deferred", "recipients",
                "matched_recipients", "stale_recipients", "reason", "dead_lettered", "recipient_wake_capabilities",
                "client_msg_id");
        assertThat(mapper.readTree(codec.encode(samples().get(7))).fieldNames()).toIterable().containsExactly(
                "agent", "kind", "name", "capacity", "meta", "offered_at");
        assertThat(mapper.readTree(codec.encode(samples().get(4))).fieldNames()).toIterable().containsExactly(
                "task_id", "title", "description", "depends_on", "status", "suggested_owner", "project", "version",
                "created_by", "created_at", "updated_at", "_causal_parent");
        assertThat(mapper.readTree(codec.encode(samples().get(14))).fieldNames()).toIterable().containsExactly(
                "identity", "through_seq", "source");
    }

    @Test
    void corruptPayloadsAreReported() {
        for (String[] bad : new String[][]{{"chat", "[1]"}, {"ledger_task", "{\"task_id\":5}"},
                {"ledger_progress", "{\"kind\":\"weird\"}"}, {"resource", "{\"agent\":\"a\"}"},
                {"mailbox_watermark", "{\"identity\":\"a\",\"through_seq\":\"x\"}"}, {"dead_letter_cleared", "{}"},
                {"delivery_receipt_immediate", "{\"sender\":\"a\",\"recipients\":[1]}"}, {"chat", "{\"a\":1} x"}}) {
            assertThatThrownBy(() -> codec.decode(bad[0], 1.0, bad[1])).as(bad[0] + " " + bad[1])
                    .isInstanceOf(EventCodec.CorruptPayloadException.class);
        }
    }

    @Test
    void sqliteStoresReplaysAndReadsAfterBounded(@TempDir Path dir) throws Exception {
        Path db = dir.resolve("m.db");
        try (SqliteJournal j = SqliteJournal.open(db)) {
            j.append(samples());
        }
        try (SqliteJournal j = SqliteJournal.open(db)) {
            List<CoordinationEvent> back = new ArrayList<>();
            j.replay(e -> back.add(e.event()));
            assertThat(back).isEqualTo(samples());
            List<JournaledEvent> chats = j.readAfter(0, 10, Set.of("chat"));
            assertThat(chats).extracting(JournaledEvent::seq).containsExactly(1L, 2L, 3L);
            assertThat(j.readAfter(1, 1, Set.of("chat"))).extracting(JournaledEvent::seq).containsExactly(2L);
            assertThat(j.readAfter(3, 10, Set.of("chat"))).isEmpty();
            assertThat(j.readAfter(0, 100, Set.of("mailbox_watermark", "dead_letter_cleared")))
                    .extracting(e -> e.event().kind())
                    .containsExactly("mailbox_watermark", "mailbox_watermark", "dead_letter_cleared");
            assertThat(j.readAfter(0, 0, Set.of("chat"))).isEmpty();
        }
    }
}
