package dev.synapsehub.journal;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import dev.synapsehub.core.board.BoardStatus;
import dev.synapsehub.core.board.BoardTask;
import dev.synapsehub.core.board.NoteKind;
import dev.synapsehub.core.board.ProgressNote;
import dev.synapsehub.core.event.CapabilityCardEvent;
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
import dev.synapsehub.core.event.ReceiptsDeliveredEvent;
import dev.synapsehub.core.event.ResourceOfferedEvent;
import dev.synapsehub.core.messaging.ReceiptVerdict;
import dev.synapsehub.core.resource.ResourceOffer;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Payload shapes (wire contract §12.4) of the board, resource, chat, mailbox and receipt kinds.
 * Kept apart from {@link EventCodec} (claim family), which delegates here for these kinds.
 *
 * <ul>
 *   <li>{@code chat}: the frame as fanned out, without {@code seq}, byte for byte (non-ASCII
 *       characters escaped), followed by two hub members the core needs on replay:
 *       {@code _dead_lettered} (bool) and {@code _addressees} (string[]). They are always the
 *       last two top-level members, so decoding cuts exactly them off even when a client sent
 *       members of the same names.</li>
 *   <li>{@code ledger_task}: the task object + optional {@code _causal_parent} (raw object).</li>
 *   <li>{@code ledger_progress}: the note object. {@code resource}: {@code agent, kind, name,
 *       capacity, meta, offered_at} ({@code meta} kept verbatim).</li>
 *   <li>{@code delivery_receipt_*}, {@code mailbox_watermark}, {@code dead_letter_escalation}:
 *       the contract members; {@code dead_letter_cleared} (ours): {@code name};
 *       {@code delivery_receipt_outbox_delivered} (ours): {@code sender},
 *       {@code notification_ids} (string[]).</li>
 *   <li>{@code capability_card} (ours): {@code agent}, {@code card} (the card object, kept
 *       verbatim); {@code capability_card_removed} (ours): {@code agent}.</li>
 * </ul>
 * Thread-safe.
 */
public final class MessagingEventCodec {
    /** The kinds this codec encodes and decodes. */
    public static final Set<String> KINDS = Set.of("chat", "ledger_task", "ledger_progress", "resource",
            "delivery_receipt_requested", "delivery_receipt_immediate", "delivery_receipt_deferred",
            "delivery_receipt_expired", "mailbox_watermark", "dead_letter_escalation", "dead_letter_cleared",
            "delivery_receipt_outbox_delivered", "capability_card", "capability_card_removed");

    private static final String DEAD_LETTERED = "_dead_lettered";
    private static final String ADDRESSEES = "_addressees";
    private static final JsonFactory FACTORY = PayloadReader.FACTORY;

    /** True for the kinds handled here. */
    public static boolean knows(String kind) {
        return KINDS.contains(kind);
    }

    /** True for the events handled here. */
    public static boolean handles(CoordinationEvent event) {
        return KINDS.contains(event.kind());
    }

    // ------------------------------------------------------------------------------ encode

    /** The stored payload: compact, ASCII-only JSON. */
    public String encode(CoordinationEvent event) {
        if (event instanceof ChatEvent c) {
            return encodeChat(c);
        }
        StringWriter out = new StringWriter(256);
        try (JsonGenerator g = FACTORY.createGenerator(out)) {
            g.writeStartObject();
            if (event instanceof LedgerTaskEvent t) {
                writeTask(g, t.task());
                if (t.causalParent() != null && !t.causalParent().isBlank()) {
                    g.writeFieldName("_causal_parent");
                    g.writeRawValue(asciiEscape(t.causalParent()));
                }
            } else if (event instanceof LedgerProgressEvent p) {
                ProgressNote n = p.note();
                g.writeStringField("task_id", n.taskId());
                g.writeStringField("author", n.author());
                g.writeStringField("kind", n.kind().wire());
                g.writeStringField("text", n.text());
                g.writeNumberField("posted_at", n.postedAt());
            } else if (event instanceof ResourceOfferedEvent r) {
                ResourceOffer o = r.offer();
                g.writeStringField("agent", o.agent());
                g.writeStringField("kind", o.kind());
                g.writeStringField("name", o.name());
                g.writeNumberField("capacity", o.capacity());
                g.writeFieldName("meta");
                g.writeRawValue(asciiEscape(o.meta()));
                g.writeNumberField("offered_at", o.offeredAt());
            } else if (event instanceof DeliveryReceiptRequestedEvent e) {
                head(g, e.sender(), e.target(), e.messageId(), e.messageSeq());
                clientMsgId(g, e.clientMsgId());
            } else if (event instanceof DeliveryReceiptImmediateEvent e) {
                ReceiptVerdict v = e.verdict();
                head(g, e.sender(), e.target(), e.messageId(), e.messageSeq());
                g.writeBooleanField("delivered", v.delivered());
                g.writeBooleanField("deferred", false);
                strings(g, "recipients", v.recipients());
                strings(g, "matched_recipients", v.matchedRecipients());
                strings(g, "stale_recipients", v.staleRecipients());
                g.writeStringField("reason", v.reason());
                g.writeBooleanField("dead_lettered", v.deadLettered());
                g.writeObjectFieldStart("recipient_wake_capabilities");
                for (Map.Entry<String, String> w : v.wakeCapabilities().entrySet()) {
                    g.writeStringField(w.getKey(), w.getValue());
                }
                g.writeEndObject();
                clientMsgId(g, e.clientMsgId());
            } else if (event instanceof DeliveryReceiptDeferredEvent e) {
                head(g, e.sender(), e.target(), e.messageId(), e.messageSeq());
                g.writeBooleanField("delivered", true);
                g.writeBooleanField("deferred", true);
                strings(g, "recipients", e.recipients());
                g.writeStringField("acked_by", e.ackedBy());
                clientMsgId(g, e.clientMsgId());
            } else if (event instanceof DeliveryReceiptExpiredEvent e) {
                head(g, e.sender(), e.target(), e.messageId(), e.messageSeq());
                g.writeBooleanField("delivered", false);
                g.writeBooleanField("deferred", true);
                g.writeBooleanField("expired", true);
                g.writeStringField("reason", e.reason());
                strings(g, "recipients", List.of());
                clientMsgId(g, e.clientMsgId());
            } else if (event instanceof MailboxWatermarkEvent e) {
                g.writeStringField("identity", e.identity());
                g.writeNumberField("through_seq", e.throughSeq());
                g.writeStringField("source", e.source().wire());
            } else if (event instanceof DeadLetterEscalationEvent e) {
                g.writeStringField("target", e.target());
                g.writeNumberField("count", e.count());
                g.writeStringField("last_sender", e.lastSender());
                g.writeNumberField("threshold", e.threshold());
            } else if (event instanceof DeadLetterClearedEvent e) {
                g.writeStringField("name", e.name());
            } else if (event instanceof CapabilityCardEvent e) {
                g.writeStringField("agent", e.agent());
                g.writeFieldName("card");
                g.writeRawValue(asciiEscape(e.cardJson()));
            } else if (event instanceof dev.synapsehub.core.event.CapabilityCardRemovedEvent e) {
                g.writeStringField("agent", e.agent());
            } else if (event instanceof ReceiptsDeliveredEvent e) {
                g.writeStringField("sender", e.sender());
                strings(g, "notification_ids", e.notificationIds());
            } else {
                throw new IllegalArgumentException("no messaging payload shape for " + event.getClass().getName());
            }
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException("encoding " + event.kind(), e);
        }
        return out.toString();
    }

    private static String encodeChat(ChatEvent c) {
        String frame = c.frameJson().strip();
        if (!frame.startsWith("{") || !frame.endsWith("}")) {
            throw new IllegalArgumentException("chat frame is not a JSON object");
        }
        String escaped = asciiEscape(frame);
        StringBuilder sb = new StringBuilder(escaped.length() + 64);
        sb.append(escaped, 0, escaped.length() - 1);
        String body = frame.substring(1, frame.length() - 1).strip();
        if (!body.isEmpty()) {
            sb.append(',');
        }
        sb.append('"').append(DEAD_LETTERED).append("\":").append(c.deadLettered());
        sb.append(",\"").append(ADDRESSEES).append("\":");
        StringWriter out = new StringWriter();
        try (JsonGenerator g = FACTORY.createGenerator(out)) {
            g.writeStartArray();
            for (String a : c.addressees()) {
                g.writeString(a);
            }
            g.writeEndArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        sb.append(out).append('}');
        return sb.toString();
    }

    private static void writeTask(JsonGenerator g, BoardTask t) throws IOException {
        g.writeStringField("task_id", t.taskId());
        g.writeStringField("title", t.title());
        g.writeStringField("description", t.description());
        strings(g, "depends_on", t.dependsOn());
        g.writeStringField("status", t.status().wire());
        g.writeStringField("suggested_owner", t.suggestedOwner());
        g.writeStringField("project", t.project());
        g.writeNumberField("version", t.version());
        g.writeStringField("created_by", t.createdBy());
        g.writeNumberField("created_at", t.createdAt());
        g.writeNumberField("updated_at", t.updatedAt());
    }

    private static void head(JsonGenerator g, String sender, String target, long msgId, long msgSeq) throws IOException {
        g.writeStringField("sender", sender);
        if (target == null) {
            g.writeNullField("target");
        } else {
            g.writeStringField("target", target);
        }
        g.writeNumberField("message_id", msgId);
        g.writeNumberField("message_seq", msgSeq);
    }

    private static void clientMsgId(JsonGenerator g, String id) throws IOException {
        if (id != null) {
            g.writeStringField("client_msg_id", id);
        }
    }

    private static void strings(JsonGenerator g, String name, List<String> values) throws IOException {
        g.writeArrayFieldStart(name);
        for (String v : values) {
            g.writeString(v);
        }
        g.writeEndArray();
    }

    /**
     * Escapes every character outside printable ASCII as {@code \\uXXXX}. Valid JSON text has
     * such characters only inside strings, where the escape is equivalent, so the result is the
     * same JSON value.
     */
    static String asciiEscape(String json) {
        StringBuilder sb = null;
        for (int i = 0; i < json.length(); i++) {
            char ch = json.charAt(i);
            if (ch >= 0x7f) {
                if (sb == null) {
                    sb = new StringBuilder(json.length() + 16).append(json, 0, i);
                }
                sb.append(String.format("\\u%04x", (int) ch));
            } else if (sb != null) {
                sb.append(ch);
            }
        }
        return sb == null ? json : sb.toString();
    }

    // ------------------------------------------------------------------------------ decode

    /** Decodes a stored row of one of {@link #KINDS}; every member is read by {@link PayloadReader}. */
    public CoordinationEvent decode(String kind, double ts, String payload) throws EventCodec.CorruptPayloadException {
        PayloadReader m = PayloadReader.parse(payload, true);
        switch (kind) {
            case "chat":
                return decodeChat(ts, payload, m);
            case "ledger_task":
                return new LedgerTaskEvent(ts, readTask(m), m.isObject("_causal_parent") ? m.raw("_causal_parent") : null);
            case "ledger_progress": {
                String kindName = m.text("kind", "");
                return new LedgerProgressEvent(ts, new ProgressNote(m.text("task_id", ""), m.text("author", ""),
                        NoteKind.fromWire(kindName).orElseThrow(() -> corrupt("unknown note kind " + kindName)),
                        m.text("text", ""), m.number("posted_at", ts)));
            }
            case "resource":
                return new ResourceOfferedEvent(ts, new ResourceOffer(m.id("agent"), m.id("kind"), m.id("name"),
                        (int) Math.min(Integer.MAX_VALUE, m.integer("capacity", 1)),
                        m.isObject("meta") ? m.raw("meta") : "{}", m.number("offered_at", ts)));
            case "delivery_receipt_requested":
                return new DeliveryReceiptRequestedEvent(ts, m.text("sender"), m.nullableText("target"),
                        m.integer("message_id", 0, 0), m.integer("message_seq", 0, 0), m.nullableText("client_msg_id"));
            case "delivery_receipt_immediate": {
                ReceiptVerdict v = new ReceiptVerdict(m.bool("delivered", false), m.strings("recipients"),
                        m.strings("matched_recipients"), m.strings("stale_recipients"), m.text("reason", ""),
                        m.bool("dead_lettered", false), m.stringMap("recipient_wake_capabilities"));
                return new DeliveryReceiptImmediateEvent(ts, m.text("sender"), m.nullableText("target"),
                        m.integer("message_id", 0, 0), m.integer("message_seq", 0, 0), v,
                        m.nullableText("client_msg_id"));
            }
            case "delivery_receipt_deferred":
                return new DeliveryReceiptDeferredEvent(ts, m.text("sender"), m.nullableText("target"),
                        m.integer("message_id", 0, 0), m.integer("message_seq", 0, 0), m.strings("recipients"),
                        m.text("acked_by", ""), m.nullableText("client_msg_id"));
            case "delivery_receipt_expired":
                return new DeliveryReceiptExpiredEvent(ts, m.text("sender"), m.nullableText("target"),
                        m.integer("message_id", 0, 0), m.integer("message_seq", 0, 0), m.text("reason", ""),
                        m.nullableText("client_msg_id"));
            case "mailbox_watermark": {
                MailboxWatermarkEvent.Source source = "ack".equals(m.text("source", "cursor"))
                        ? MailboxWatermarkEvent.Source.ACK : MailboxWatermarkEvent.Source.CURSOR;
                return new MailboxWatermarkEvent(ts, m.id("identity"), m.integer("through_seq", 0, 0), source);
            }
            case "dead_letter_escalation":
                return new DeadLetterEscalationEvent(ts, m.text("target"), m.integer("count", 0, 0),
                        m.text("last_sender", ""), (int) Math.min(Integer.MAX_VALUE, m.integer("threshold", 0, 0)));
            case "dead_letter_cleared":
                return new DeadLetterClearedEvent(ts, m.text("name"));
            case "capability_card":
                if (!m.isObject("card")) {
                    throw corrupt("a capability_card without its card object");
                }
                return new CapabilityCardEvent(ts, m.id("agent"), m.raw("card"));
            case "capability_card_removed":
                return new dev.synapsehub.core.event.CapabilityCardRemovedEvent(ts, m.id("agent"));
            case "delivery_receipt_outbox_delivered":
                return new ReceiptsDeliveredEvent(ts, m.text("sender"), m.strings("notification_ids"));
            default:
                throw corrupt("not a messaging kind: " + kind);
        }
    }

    /**
     * A chat row: the frame, then the hub's two members when they close the object (cut off
     * exactly), else a reference row without them. {@code sender} is required; {@code target}
     * and {@code channel} are strings or absent, as the wire admits them.
     */
    private static ChatEvent decodeChat(double ts, String payload, PayloadReader m)
            throws EventCodec.CorruptPayloadException {
        String frame;
        boolean deadLettered = false;
        List<String> to = List.of();
        int size = m.size();
        if (m.indexOf(DEAD_LETTERED) == size - 2 && m.indexOf(ADDRESSEES) == size - 1 && size >= 2) {
            // the hub's two members close the object: cut them off exactly
            int cut = payload.lastIndexOf(',', m.nameOffset(DEAD_LETTERED));
            frame = cut < 0 ? "{}" : payload.substring(0, cut) + "}";
            deadLettered = m.bool(DEAD_LETTERED, false);
            to = m.strings(ADDRESSEES);
        } else {
            frame = payload; // a reference chat row: no hub members
        }
        String channel = m.nullableText("channel");
        return new ChatEvent(ts, m.integer("msg_id", 0, 0), m.text("sender"), m.nullableText("target"),
                channel == null || channel.isBlank() ? null : channel, deadLettered, to, frame);
    }

    private static BoardTask readTask(PayloadReader m) throws EventCodec.CorruptPayloadException {
        String status = m.text("status", "open");
        return new BoardTask(m.id("task_id"), m.text("title", ""), m.text("description", ""), m.strings("depends_on"),
                BoardStatus.fromWire(status.isEmpty() ? "open" : status)
                        .orElseThrow(() -> corrupt("unknown status " + status)),
                m.text("suggested_owner", ""), m.text("project", ""), m.integer("version", 1, 1),
                m.text("created_by", ""), m.number("created_at", 0.0), m.number("updated_at", 0.0));
    }

    private static EventCodec.CorruptPayloadException corrupt(String message) {
        return PayloadReader.corrupt(message);
    }
}
