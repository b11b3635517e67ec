package dev.synapsehub.journal;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.databind.JsonNode;
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
import dev.synapsehub.core.messaging.ReceiptVerdict;
import dev.synapsehub.core.resource.ResourceOffer;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

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
 *       the contract members; {@code dead_letter_cleared} (ours): {@code name}.</li>
 * </ul>
 * Thread-safe.
 */
public final class MessagingEventCodec {
    /** The kinds this codec encodes and decodes. */
    public static final Set<String> KINDS = Set.of("chat", "ledger_task", "ledger_progress", "resource",
            "delivery_receipt_requested", "delivery_receipt_immediate", "delivery_receipt_deferred",
            "delivery_receipt_expired", "mailbox_watermark", "dead_letter_escalation", "dead_letter_cleared");

    private static final String DEAD_LETTERED = "_dead_lettered";
    private static final String ADDRESSEES = "_addressees";
    private static final JsonFactory FACTORY = JsonFactory.builder().enable(JsonWriteFeature.ESCAPE_NON_ASCII).build();
    private static final ObjectMapper MAPPER = new ObjectMapper(FACTORY);

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

    /** Decodes a stored row of one of {@link #KINDS}. */
    public CoordinationEvent decode(String kind, double ts, String payload) throws EventCodec.CorruptPayloadException {
        if (payload == null) {
            throw new EventCodec.CorruptPayloadException("null payload");
        }
        try {
            Map<String, Member> m = members(payload);
            switch (kind) {
                case "chat":
                    return decodeChat(ts, payload, m);
                case "ledger_task":
                    return new LedgerTaskEvent(ts, readTask(m), m.containsKey("_causal_parent")
                            && m.get("_causal_parent").node().isObject() ? m.get("_causal_parent").raw() : null);
                case "ledger_progress":
                    return new LedgerProgressEvent(ts, new ProgressNote(optText(m, "task_id"), optText(m, "author"),
                            NoteKind.fromWire(optText(m, "kind")).orElseThrow(() -> corrupt("unknown note kind")),
                            optText(m, "text"), num(m, "posted_at", ts)));
                case "resource": {
                    Member meta = m.get("meta");
                    return new ResourceOfferedEvent(ts, new ResourceOffer(text(m, "agent"), text(m, "kind"),
                            text(m, "name"), (int) Math.min(Integer.MAX_VALUE, integer(m, "capacity", 1)),
                            meta != null && meta.node().isObject() ? meta.raw() : "{}", num(m, "offered_at", ts)));
                }
                case "delivery_receipt_requested":
                    return new DeliveryReceiptRequestedEvent(ts, text(m, "sender"), optTextOrNull(m, "target"),
                            integer(m, "message_id", 0), integer(m, "message_seq", 0), optTextOrNull(m, "client_msg_id"));
                case "delivery_receipt_immediate": {
                    Map<String, String> wake = new TreeMap<>();
                    Member w = m.get("recipient_wake_capabilities");
                    if (w != null && w.node().isObject()) {
                        for (Iterator<Map.Entry<String, JsonNode>> it = w.node().fields(); it.hasNext(); ) {
                            Map.Entry<String, JsonNode> e = it.next();
                            wake.put(e.getKey(), e.getValue().asText());
                        }
                    }
                    ReceiptVerdict v = new ReceiptVerdict(bool(m, "delivered"), strs(m, "recipients"),
                            strs(m, "matched_recipients"), strs(m, "stale_recipients"), optText(m, "reason"),
                            bool(m, "dead_lettered"), wake);
                    return new DeliveryReceiptImmediateEvent(ts, text(m, "sender"), optTextOrNull(m, "target"),
                            integer(m, "message_id", 0), integer(m, "message_seq", 0), v, optTextOrNull(m, "client_msg_id"));
                }
                case "delivery_receipt_deferred":
                    return new DeliveryReceiptDeferredEvent(ts, text(m, "sender"), optTextOrNull(m, "target"),
                            integer(m, "message_id", 0), integer(m, "message_seq", 0), strs(m, "recipients"),
                            optText(m, "acked_by"), optTextOrNull(m, "client_msg_id"));
                case "delivery_receipt_expired":
                    return new DeliveryReceiptExpiredEvent(ts, text(m, "sender"), optTextOrNull(m, "target"),
                            integer(m, "message_id", 0), integer(m, "message_seq", 0), optText(m, "reason"),
                            optTextOrNull(m, "client_msg_id"));
                case "mailbox_watermark": {
                    String source = optText(m, "source");
                    MailboxWatermarkEvent.Source s = "ack".equals(source) ? MailboxWatermarkEvent.Source.ACK
                            : MailboxWatermarkEvent.Source.CURSOR;
                    return new MailboxWatermarkEvent(ts, text(m, "identity"), integer(m, "through_seq", 0), s);
                }
                case "dead_letter_escalation":
                    return new DeadLetterEscalationEvent(ts, text(m, "target"), integer(m, "count", 0),
                            optText(m, "last_sender"), (int) integer(m, "threshold", 0));
                case "dead_letter_cleared":
                    return new DeadLetterClearedEvent(ts, text(m, "name"));
                default:
                    throw corrupt("not a messaging kind: " + kind);
            }
        } catch (EventCodec.CorruptPayloadException e) {
            throw e;
        } catch (IOException | RuntimeException e) {
            throw new EventCodec.CorruptPayloadException("undecodable " + kind + " payload: " + e.getMessage(), e);
        }
    }

    private static ChatEvent decodeChat(double ts, String payload, Map<String, Member> m)
            throws EventCodec.CorruptPayloadException {
        Member dead = m.get(DEAD_LETTERED);
        Member addressees = m.get(ADDRESSEES);
        String frame;
        boolean deadLettered = false;
        List<String> to = List.of();
        if (dead != null && addressees != null && dead.index() == m.size() - 2 && addressees.index() == m.size() - 1) {
            // the hub's two members close the object: cut them off exactly
            int cut = payload.lastIndexOf(',', dead.nameOffset());
            frame = cut < 0 ? "{}" : payload.substring(0, cut) + "}";
            deadLettered = dead.node().asBoolean(false);
            to = strs(m, ADDRESSEES);
        } else {
            frame = payload; // a reference chat row: no hub members
        }
        Member msgId = m.get("msg_id");
        Member target = m.get("target");
        Member channel = m.get("channel");
        return new ChatEvent(ts,
                msgId == null ? 0 : msgId.node().asLong(0), text(m, "sender"),
                target != null && target.node().isTextual() ? target.node().textValue() : null,
                channel != null && channel.node().isTextual() && !channel.node().textValue().isBlank()
                        ? channel.node().textValue() : null,
                deadLettered, to, frame);
    }

    private static BoardTask readTask(Map<String, Member> m) throws EventCodec.CorruptPayloadException {
        String status = optText(m, "status");
        return new BoardTask(text(m, "task_id"), optText(m, "title"), optText(m, "description"), strs(m, "depends_on"),
                BoardStatus.fromWire(status.isEmpty() ? "open" : status).orElseThrow(() -> corrupt("unknown status")),
                optText(m, "suggested_owner"), optText(m, "project"), integer(m, "version", 1),
                optText(m, "created_by"), num(m, "created_at", 0.0), num(m, "updated_at", 0.0));
    }

    /** One top-level member: its position, the offset of its name token, its raw text and value. */
    private record Member(int index, int nameOffset, String raw, JsonNode node) {
    }

    /** The top-level members of an object in order; a repeated name keeps its last occurrence. */
    private static Map<String, Member> members(String payload) throws IOException, EventCodec.CorruptPayloadException {
        Map<String, Member> out = new LinkedHashMap<>();
        List<String> order = new ArrayList<>();
        try (JsonParser p = FACTORY.createParser(payload)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw corrupt("payload is not a JSON object");
            }
            for (JsonToken t = p.nextToken(); t == JsonToken.FIELD_NAME; t = p.nextToken()) {
                String name = p.currentName();
                int nameOffset = (int) p.getTokenLocation().getCharOffset();
                p.nextToken();
                int start = (int) p.getTokenLocation().getCharOffset();
                if (p.currentToken().isStructStart()) {
                    p.skipChildren();
                } else {
                    p.finishToken(); // scalars are read lazily; consume the value before taking the end offset
                }
                int end = (int) p.getCurrentLocation().getCharOffset();
                String raw = payload.substring(start, end);
                out.remove(name);
                order.remove(name);
                out.put(name, new Member(0, nameOffset, raw, MAPPER.readTree(raw)));
                order.add(name);
            }
            if (p.nextToken() != null) {
                throw corrupt("trailing content after the payload object");
            }
        }
        Map<String, Member> indexed = new LinkedHashMap<>();
        int i = 0;
        for (String name : order) {
            Member mb = out.get(name);
            indexed.put(name, new Member(i++, mb.nameOffset(), mb.raw(), mb.node()));
        }
        return indexed;
    }

    private static String text(Map<String, Member> m, String name) throws EventCodec.CorruptPayloadException {
        Member v = m.get(name);
        if (v == null || !v.node().isTextual()) {
            throw corrupt(name + " must be a string");
        }
        return v.node().textValue();
    }

    private static String optText(Map<String, Member> m, String name) throws EventCodec.CorruptPayloadException {
        String s = optTextOrNull(m, name);
        return s == null ? "" : s;
    }

    private static String optTextOrNull(Map<String, Member> m, String name) throws EventCodec.CorruptPayloadException {
        Member v = m.get(name);
        if (v == null || v.node().isNull()) {
            return null;
        }
        if (!v.node().isTextual()) {
            throw corrupt(name + " must be a string");
        }
        return v.node().textValue();
    }

    private static long integer(Map<String, Member> m, String name, long dflt) throws EventCodec.CorruptPayloadException {
        Member v = m.get(name);
        if (v == null || v.node().isNull()) {
            return dflt;
        }
        if (v.node().isIntegralNumber() && v.node().canConvertToLong()) {
            return v.node().longValue();
        }
        if (v.node().isNumber() && v.node().doubleValue() == Math.rint(v.node().doubleValue())
                && Math.abs(v.node().doubleValue()) < 9.0e15) {
            return (long) v.node().doubleValue();
        }
        throw corrupt(name + " must be an integer");
    }

    private static double num(Map<String, Member> m, String name, double dflt) throws EventCodec.CorruptPayloadException {
        Member v = m.get(name);
        if (v == null || v.node().isNull()) {
            return dflt;
        }
        if (!v.node().isNumber()) {
            throw corrupt(name + " must be a number");
        }
        return v.node().doubleValue();
    }

    private static boolean bool(Map<String, Member> m, String name) {
        Member v = m.get(name);
        return v != null && v.node().asBoolean(false);
    }

    private static List<String> strs(Map<String, Member> m, String name) throws EventCodec.CorruptPayloadException {
        Member v = m.get(name);
        if (v == null || v.node().isNull()) {
            return List.of();
        }
        if (!v.node().isArray()) {
            throw corrupt(name + " must be an array");
        }
        List<String> out = new ArrayList<>();
        for (JsonNode n : v.node()) {
            if (!n.isTextual()) {
                throw corrupt(name + " must hold strings");
            }
            out.add(n.textValue());
        }
        return out;
    }

    private static EventCodec.CorruptPayloadException corrupt(String message) {
        return new EventCodec.CorruptPayloadException(message);
    }
}
