package dev.synapsehub.federation.follow;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.DoubleNode;
import com.fasterxml.jackson.databind.node.IntNode;
import com.fasterxml.jackson.databind.node.LongNode;
import com.fasterxml.jackson.databind.node.MissingNode;
import com.fasterxml.jackson.databind.node.TextNode;
import com.fasterxml.jackson.databind.node.NullNode;
import dev.synapsehub.federation.link.ReplyDecoder;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * One {@code multihub_log_snapshot} page read with a streaming parser: per event only the fields
 * the follower checks and folds, and where the event's text lies in the frame (to fingerprint
 * it). A page of 5,000 events would otherwise become 10,000 tree objects only to read a few fields.
 * Everything here reads as the tree would: a repeated key counts by its last occurrence, the
 * folded payload fields are tree nodes, and a fingerprint parses the event's own text.
 */
final class LogPage {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    /** Decodes a page for {@code PeerLink}. */
    static final ReplyDecoder<LogPage> DECODER = new ReplyDecoder<>() {
        @Override
        public LogPage decode(byte[] utf8) throws IOException {
            return parse(utf8);
        }

        @Override
        public LogPage decode(byte[] scratch, int length) throws IOException {
            return parseDetached(scratch, length);
        }

        @Override
        public String type(LogPage page) {
            return page.type;
        }
    };

    /** What a tree's {@code payload} would be: absent, JSON null, an object, or anything else. */
    enum PayloadShape { ABSENT, NULL, OBJECT, OTHER }

    /** One element of {@code events}; for a non-object element every field is absent. */
    static final class Event {
        boolean seqIntegral;
        long seq;
        boolean tsNumber;
        String kind; // null unless a string
        PayloadShape payload = PayloadShape.ABSENT;
        JsonNode taskId = MissingNode.getInstance();
        JsonNode owner = MissingNode.getInstance();
        JsonNode leaseExpiresAt = MissingNode.getInstance(); // unless a float: then leaseFloat
        String leaseFloat; // a float lease as written, read only if this event's claim is the one kept
        JsonNode epoch = MissingNode.getInstance();
        JsonNode status = MissingNode.getInstance();
        int start;
        int end;
        byte[] text; // the event's own bytes, kept by a page parsed from a reused buffer

        private void resetPayload(PayloadShape shape) {
            payload = shape;
            taskId = owner = leaseExpiresAt = epoch = status = MissingNode.getInstance();
            leaseFloat = null;
        }

        /**
         * The lease as {@code JsonNode.asDouble(0)} reads the tree's value. A float is kept as its
         * text and parsed here, by {@link Double#parseDouble} as Jackson's own
         * {@code getDoubleValue} does: most claims a poll reads are overwritten by a later event
         * of the same task, and parsing every one cost a sixth of the follower's page parsing
         * (docs/benchmarks.md, "Cold catch-up, fourth pass").
         */
        double leaseSeconds() {
            return leaseFloat != null ? Double.parseDouble(leaseFloat) : leaseExpiresAt.asDouble(0);
        }
    }

    private byte[] frame; // null once detached: only the first and last event's text is kept
    private String type = "";
    private boolean logEndIntegral;
    private long logEnd;
    private List<Event> events; // null: absent or not a list

    private LogPage(byte[] frame) {
        this.frame = frame;
    }

    /** True when {@code log_end_seq} is an integer. */
    boolean logEndKnown() {
        return logEndIntegral;
    }

    long logEnd() {
        return logEnd;
    }

    /** The events, or null when {@code events} is absent or not a list. */
    List<Event> events() {
        return events;
    }

    /**
     * The event's fingerprint, from its own text parsed as a tree (so exactly as before). A page
     * parsed from a reused buffer ({@link #parseDetached}) has the text of its first and last
     * event only, the two a follower fingerprints (the overlap and the new cursor).
     */
    String fingerprint(Event e) throws IOException {
        if (e.text != null) {
            return PeerFollower.fingerprint(MAPPER.readTree(e.text));
        }
        if (frame == null) {
            throw new IllegalStateException("only the first and last event of a detached page keep their text");
        }
        return PeerFollower.fingerprint(MAPPER.readTree(MAPPER.getFactory().createParser(frame, e.start, e.end - e.start)));
    }

    /** Reads a page; a frame that is not a JSON object yields a page with nothing known. */
    static LogPage parse(byte[] frame) throws IOException {
        return parse(frame, frame.length);
    }

    /**
     * Reads a page from the first {@code length} bytes of {@code scratch}, a buffer reused once
     * this returns: the first and last event keep a copy of their text, nothing else refers to it.
     */
    static LogPage parseDetached(byte[] scratch, int length) throws IOException {
        LogPage page = parse(scratch, length);
        if (page.events != null && !page.events.isEmpty()) {
            keepText(scratch, page.events.get(0));
            keepText(scratch, page.events.get(page.events.size() - 1));
        }
        page.frame = null;
        return page;
    }

    private static void keepText(byte[] scratch, Event e) {
        e.text = java.util.Arrays.copyOfRange(scratch, e.start, e.end);
    }

    private static LogPage parse(byte[] frame, int length) throws IOException {
        LogPage page = new LogPage(frame);
        try (JsonParser p = MAPPER.getFactory().createParser(frame, 0, length)) {
            JsonToken top = p.nextToken();
            if (top != JsonToken.START_OBJECT) {
                page.type = null; // not a frame at all (the link never hands one over)
                return page;
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken value = p.nextToken();
                switch (name) {
                    case "type" -> page.type = value == JsonToken.VALUE_STRING ? p.getText() : tree(p).asText();
                    case "log_end_seq" -> {
                        page.logEndIntegral = value == JsonToken.VALUE_NUMBER_INT;
                        page.logEnd = page.logEndIntegral ? integral(p) : 0;
                        p.skipChildren();
                    }
                    case "events" -> {
                        if (value == JsonToken.START_ARRAY) {
                            page.events = new ArrayList<>();
                            JsonToken t;
                            while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
                                if (t == null) {
                                    throw new IOException("unexpected end of the page");
                                }
                                page.events.add(event(p));
                            }
                        } else {
                            page.events = null;
                            p.skipChildren();
                        }
                    }
                    default -> p.skipChildren();
                }
            }
            // like ObjectMapper.readTree, nothing after the object is read
        }
        return page;
    }

    /**
     * The current value as the tree would hold it. Strings and numbers, nearly every value read,
     * are made here directly: {@code readValueAsTree} sets up a deserialization context per call.
     */
    private static JsonNode tree(JsonParser p) throws IOException {
        switch (p.currentToken()) {
            case VALUE_NULL:
                return NullNode.getInstance();
            case VALUE_STRING:
                return TextNode.valueOf(p.getText());
            case VALUE_NUMBER_INT:
                switch (p.getNumberType()) {
                    case INT:
                        return IntNode.valueOf(p.getIntValue());
                    case LONG:
                        return LongNode.valueOf(p.getLongValue());
                    default:
                        return p.readValueAsTree();
                }
            case VALUE_NUMBER_FLOAT:
                return DoubleNode.valueOf(p.getDoubleValue()); // what the tree makes of a float without USE_BIG_DECIMAL_FOR_FLOATS
            default:
                return p.readValueAsTree();
        }
    }

    /** The current integer token as {@code JsonNode.longValue()} reads it (a big one truncated). */
    private static long integral(JsonParser p) throws IOException {
        return p.getNumberType() == JsonParser.NumberType.BIG_INTEGER ? p.getBigIntegerValue().longValue() : p.getLongValue();
    }

    private static Event event(JsonParser p) throws IOException {
        Event e = new Event();
        e.start = (int) p.currentTokenLocation().getByteOffset();
        if (p.currentToken() != JsonToken.START_OBJECT) {
            p.skipChildren();
            e.end = (int) p.currentLocation().getByteOffset();
            return e;
        }
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            JsonToken value = p.nextToken();
            switch (name) {
                case "seq" -> {
                    e.seqIntegral = value == JsonToken.VALUE_NUMBER_INT;
                    e.seq = e.seqIntegral ? integral(p) : 0;
                    p.skipChildren();
                }
                case "ts" -> {
                    e.tsNumber = value == JsonToken.VALUE_NUMBER_INT || value == JsonToken.VALUE_NUMBER_FLOAT;
                    p.skipChildren();
                }
                case "kind" -> {
                    e.kind = value == JsonToken.VALUE_STRING ? p.getText() : null;
                    p.skipChildren();
                }
                case "payload" -> payload(p, e, value);
                default -> p.skipChildren();
            }
        }
        e.end = (int) p.currentLocation().getByteOffset();
        return e;
    }

    private static void payload(JsonParser p, Event e, JsonToken value) throws IOException {
        if (value == JsonToken.VALUE_NULL) {
            e.resetPayload(PayloadShape.NULL);
            return;
        }
        if (value != JsonToken.START_OBJECT) {
            e.resetPayload(PayloadShape.OTHER);
            p.skipChildren();
            return;
        }
        e.resetPayload(PayloadShape.OBJECT);
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            p.nextToken();
            switch (name) {
                case "task_id" -> e.taskId = tree(p);
                case "owner" -> e.owner = tree(p);
                case "lease_expires_at" -> {
                    // the last occurrence counts, as in the tree: a float parsed only if folded
                    boolean isFloat = p.currentToken() == JsonToken.VALUE_NUMBER_FLOAT;
                    e.leaseFloat = isFloat ? p.getText() : null;
                    e.leaseExpiresAt = isFloat ? MissingNode.getInstance() : tree(p);
                }
                case "epoch" -> e.epoch = tree(p);
                case "status" -> e.status = tree(p);
                default -> p.skipChildren();
            }
        }
    }
}
