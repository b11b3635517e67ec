package dev.synapsehub.federation.follow;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.BooleanNode;
import com.fasterxml.jackson.databind.node.DoubleNode;
import com.fasterxml.jackson.databind.node.IntNode;
import com.fasterxml.jackson.databind.node.LongNode;
import com.fasterxml.jackson.databind.node.TextNode;
import com.fasterxml.jackson.databind.node.NullNode;
import dev.synapsehub.federation.link.PlainStringBytes;
import dev.synapsehub.federation.link.ReplyDecoder;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
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

    /** How the fold treats an event's kind, decided once when the page is read. */
    enum KindClass {
        /** {@code release}: the task is released. */
        RELEASE,
        /** {@code claim}, {@code task_update}, {@code checkpoint}, {@code handoff}: the task's claim as of this event. */
        SNAPSHOT,
        /** Any other kind, or none: not folded. */
        OTHER;

        static KindClass of(String kind) {
            if (kind == null) {
                return OTHER;
            }
            return switch (kind) {
                case "release" -> RELEASE;
                case "claim", "task_update", "checkpoint", "handoff" -> SNAPSHOT;
                default -> OTHER;
            };
        }
    }

    /**
     * One element of {@code events}; for a non-object element every field is absent. The payload
     * fields are held as the fold reads them from a tree ({@code asText("")}, {@code asLong(0)},
     * {@code asDouble(0)}), decided when the page is read.
     */
    static final class Event {
        boolean seqIntegral;
        long seq;
        boolean tsNumber;
        String kind; // null unless a string
        KindClass kindClass = KindClass.OTHER;
        PayloadShape payload = PayloadShape.ABSENT;
        String taskId = "";
        String owner = "";
        double lease; // unless a float: then leaseFloat
        String leaseFloat; // a float lease as written, read only if this event's claim is the one kept
        long epoch;
        String status = "";
        int start;
        int end;
        byte[] text; // the event's own bytes, kept by a page parsed from a reused buffer

        private void resetPayload(PayloadShape shape) {
            payload = shape;
            taskId = owner = status = ""; // what a missing node reads as
            lease = 0;
            leaseFloat = null;
            epoch = 0;
        }

        private void kind(String k) {
            kind = k;
            kindClass = KindClass.of(k);
        }

        /**
         * The lease as {@code JsonNode.asDouble(0)} reads the tree's value. A float is kept as its
         * text and parsed here, by {@link Double#parseDouble} as Jackson's own
         * {@code getDoubleValue} does: most claims a poll reads are overwritten by a later event
         * of the same task, and parsing every one cost a sixth of the follower's page parsing
         * (docs/benchmarks.md, "Cold catch-up, fourth pass").
         */
        double leaseSeconds() {
            return leaseFloat != null ? Double.parseDouble(leaseFloat) : lease;
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
        LogPage plain = PlainReader.read(frame, length);
        return plain != null ? plain : parseWithJackson(frame, length);
    }

    /** Reads a page with Jackson's streaming parser: every page the plain reader gives up on. */
    static LogPage parseWithJackson(byte[] frame, int length) throws IOException {
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
                    e.kind(value == JsonToken.VALUE_STRING ? p.getText() : null);
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
                case "task_id" -> e.taskId = tree(p).asText("");
                case "owner" -> e.owner = tree(p).asText("");
                case "lease_expires_at" -> {
                    // the last occurrence counts, as in the tree: a float parsed only if folded
                    boolean isFloat = p.currentToken() == JsonToken.VALUE_NUMBER_FLOAT;
                    e.leaseFloat = isFloat ? p.getText() : null;
                    e.lease = isFloat ? 0 : tree(p).asDouble(0);
                }
                case "epoch" -> e.epoch = tree(p).asLong(0);
                case "status" -> e.status = tree(p).asText("");
                default -> p.skipChildren();
            }
        }
    }

    /**
     * Reads the plain shape a hub writes (compact or spaced JSON, text in well-formed UTF-8, the
     * page's fields of the usual types) in one pass over the bytes, straight into the events'
     * fields, without a token or a node per value: in a catch-up the follower's event loop was
     * nearly all Jackson tokenising, looking up field names and making text nodes
     * (docs/benchmarks.md, "Cold catch-up, fifth pass"; non-ASCII text since the sixth). Anything
     * else (a byte above 0x7F outside a well-formed UTF-8 sequence in a string, an escape in a
     * value or name it keeps, an odd type for a kept field, deep nesting, long numbers, and every malformed input)
     * makes it give up ({@link #read} returns null) and the page is read by Jackson as before, so
     * a page it reads is well-formed JSON whose fields it holds exactly as the Jackson reading
     * would. It checks the JSON grammar of everything it passes over, skipped values included.
     */
    static final class PlainReader {
        private static final int MAX_DEPTH = 32; // far inside Jackson's own limits (1,000)
        private static final int MAX_NUMBER = 64;
        private static final int MAX_LONG_DIGITS = 18; // always a long; Jackson's INT/LONG value, never a BIG_INTEGER
        private static final int MAX_NAME = 1_000; // Jackson refuses names over 50,000
        private static final int MAX_STRING = 1_000_000; // and strings over 20,000,000

        private static final byte[] TYPE = ascii("type");
        private static final byte[] LOG_END_SEQ = ascii("log_end_seq");
        private static final byte[] EVENTS = ascii("events");
        private static final byte[] SEQ = ascii("seq");
        private static final byte[] TS = ascii("ts");
        private static final byte[] KIND = ascii("kind");
        private static final byte[] PAYLOAD = ascii("payload");
        private static final byte[] TASK_ID = ascii("task_id");
        private static final byte[] OWNER = ascii("owner");
        private static final byte[] LEASE = ascii("lease_expires_at");
        private static final byte[] EPOCH = ascii("epoch");
        private static final byte[] STATUS = ascii("status");
        private static final String[] KNOWN_KINDS = {"claim", "release", "task_update", "checkpoint", "handoff"};
        private static final byte[][] KNOWN_KIND_BYTES = {
            ascii("claim"), ascii("release"), ascii("task_update"), ascii("checkpoint"), ascii("handoff"),
        };

        /** The reader gives up: the page goes to Jackson. */
        private static final class GiveUp extends Exception {
            GiveUp() {
                super(null, null, false, false); // no stack trace: it is a branch, not an error
            }
        }

        private final byte[] b;
        private final int n;
        private int i;
        // the last string read: [strStart, strEnd) without quotes; strEscaped if it held a backslash,
        // strAscii unless it held a (well-formed) multi-byte UTF-8 sequence
        private int strStart;
        private int strEnd;
        private boolean strEscaped;
        private boolean strAscii;
        // the last number read: [numStart, numEnd); numIntegral if no fraction or exponent
        private int numStart;
        private int numEnd;
        private boolean numIntegral;

        private PlainReader(byte[] b, int n) {
            this.b = b;
            this.n = n;
        }

        /** The page, or null when its bytes are not of the plain shape (Jackson reads it then). */
        static LogPage read(byte[] frame, int length) {
            PlainReader r = new PlainReader(frame, length);
            try {
                return r.page(new LogPage(frame));
            } catch (GiveUp | RuntimeException e) { // an index past the end included: Jackson decides
                return null;
            }
        }

        private static byte[] ascii(String s) {
            return s.getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        }

        private LogPage page(LogPage page) throws GiveUp {
            if (peek() != '{') {
                throw new GiveUp();
            }
            i++;
            if (peek() == '}') {
                return page;
            }
            while (true) {
                name();
                if (is(TYPE)) {
                    if (peek() != '"') {
                        throw new GiveUp();
                    }
                    string();
                    page.type = plainText();
                } else if (is(LOG_END_SEQ)) {
                    page.logEndIntegral = integral(1);
                    page.logEnd = page.logEndIntegral ? longValue() : 0;
                } else if (is(EVENTS)) {
                    if (peek() == '[') {
                        i++;
                        page.events = events();
                    } else {
                        page.events = null;
                        skipValue(1);
                    }
                } else {
                    skipValue(1);
                }
                if (!more('}')) {
                    return page; // nothing after the object is read, as with Jackson
                }
            }
        }

        /**
         * Reads a number if one comes (true when it is integral: {@link #longValue} then holds it),
         * else skips whatever value comes at {@code depth}: a seq the way the tree reads it.
         */
        private boolean integral(int depth) throws GiveUp {
            if (isNumber(peek())) {
                number();
                return numIntegral;
            }
            skipValue(depth);
            return false;
        }

        private List<Event> events() throws GiveUp {
            List<Event> events = new ArrayList<>();
            if (peek() == ']') {
                i++;
                return events;
            }
            while (true) {
                if (peek() != '{') {
                    throw new GiveUp(); // not an object: rare, and Jackson's offsets decide its text
                }
                events.add(event());
                if (!more(']')) {
                    return events;
                }
            }
        }

        private Event event() throws GiveUp {
            Event e = new Event();
            e.start = i;
            i++;
            if (peek() == '}') {
                i++;
                e.end = i;
                return e;
            }
            while (true) {
                name();
                if (is(SEQ)) {
                    e.seqIntegral = integral(2);
                    e.seq = e.seqIntegral ? longValue() : 0;
                } else if (is(TS)) {
                    e.tsNumber = isNumber(peek());
                    skipValue(2);
                } else if (is(KIND)) {
                    if (peek() == '"') {
                        string();
                        e.kind(kindText());
                    } else {
                        e.kind(null);
                        skipValue(2);
                    }
                } else if (is(PAYLOAD)) {
                    byte c = peek();
                    if (c == '{') {
                        i++;
                        payload(e);
                    } else if (c == 'n') {
                        skipValue(2); // checked to be exactly null
                        e.resetPayload(PayloadShape.NULL);
                    } else {
                        skipValue(2);
                        e.resetPayload(PayloadShape.OTHER);
                    }
                } else {
                    skipValue(2);
                }
                if (!more('}')) {
                    e.end = i;
                    return e;
                }
            }
        }

        private void payload(Event e) throws GiveUp {
            e.resetPayload(PayloadShape.OBJECT);
            if (peek() == '}') {
                i++;
                return;
            }
            while (true) {
                name();
                if (is(TASK_ID)) {
                    e.taskId = textField();
                } else if (is(OWNER)) {
                    e.owner = textField();
                } else if (is(STATUS)) {
                    e.status = textField();
                } else if (is(EPOCH)) {
                    JsonNode literal = literalNode();
                    if (literal != null) {
                        e.epoch = literal.asLong(0);
                    } else if (isNumber(peek())) {
                        number();
                        if (!numIntegral) {
                            throw new GiveUp(); // a float epoch: as the tree reads it, by Jackson
                        }
                        e.epoch = longValue();
                    } else {
                        throw new GiveUp();
                    }
                } else if (is(LEASE)) {
                    JsonNode literal = literalNode();
                    if (literal != null) {
                        e.leaseFloat = null;
                        e.lease = literal.asDouble(0);
                    } else if (isNumber(peek())) {
                        number();
                        if (numIntegral) {
                            e.leaseFloat = null;
                            e.lease = longValue(); // what IntNode/LongNode.asDouble gives
                        } else {
                            e.leaseFloat = new String(b, numStart, numEnd - numStart, StandardCharsets.ISO_8859_1);
                            e.lease = 0;
                        }
                    } else {
                        throw new GiveUp();
                    }
                } else {
                    skipValue(3);
                }
                if (!more('}')) {
                    return;
                }
            }
        }

        /** A text field as {@code asText("")} reads the tree's value: a plain string, null or a boolean. */
        private String textField() throws GiveUp {
            JsonNode literal = literalNode();
            if (literal != null) {
                return literal.asText("");
            }
            if (peek() != '"') {
                throw new GiveUp(); // a number or a container: read by Jackson
            }
            string();
            return plainText();
        }

        /** The node of a {@code null}, {@code true} or {@code false} literal here (read past it), else null. */
        private JsonNode literalNode() throws GiveUp {
            byte c = peek();
            if (c == 'n' || c == 't' || c == 'f') {
                literal();
                return c == 'n' ? NullNode.getInstance() : BooleanNode.valueOf(c == 't');
            }
            return null;
        }

        private String plainText() throws GiveUp {
            if (strEscaped) {
                throw new GiveUp();
            }
            // the bytes are well-formed UTF-8 (checked in string()): decoded as Jackson decodes them
            return new String(b, strStart, strEnd - strStart, strAscii ? StandardCharsets.ISO_8859_1 : StandardCharsets.UTF_8);
        }

        private String kindText() throws GiveUp {
            int len = strEnd - strStart;
            if (!strEscaped) {
                for (int k = 0; k < KNOWN_KIND_BYTES.length; k++) {
                    if (KNOWN_KIND_BYTES[k].length == len && java.util.Arrays.equals(b, strStart, strEnd, KNOWN_KIND_BYTES[k], 0, len)) {
                        return KNOWN_KINDS[k]; // no String made per event for the kinds a fold reads
                    }
                }
            }
            return plainText();
        }

        // ---- the grammar ----

        private byte peek() throws GiveUp {
            while (i < n) {
                byte c = b[i];
                if (c != ' ' && c != '\n' && c != '\r' && c != '\t') {
                    return c;
                }
                i++;
            }
            throw new GiveUp();
        }

        /** After a member or element: true at a comma (read past it), false at {@code close} (read past it). */
        private boolean more(char close) throws GiveUp {
            byte c = peek();
            i++;
            if (c == ',') {
                return true;
            }
            if (c == close) {
                return false;
            }
            throw new GiveUp();
        }

        /** A member's name and its colon; the name is then {@code [strStart, strEnd)}, without escapes. */
        private void name() throws GiveUp {
            if (peek() != '"') {
                throw new GiveUp();
            }
            string(MAX_NAME);
            if (strEscaped) {
                throw new GiveUp(); // "task\u005fid" is task_id to Jackson: not compared as bytes here
            }
            if (peek() != ':') {
                throw new GiveUp();
            }
            i++;
        }

        private boolean is(byte[] name) {
            int len = strEnd - strStart;
            return len == name.length && java.util.Arrays.equals(b, strStart, strEnd, name, 0, len);
        }

        /**
         * A string at {@code b[i] == '"'}: no control character, every escape well formed, and any
         * byte above 0x7F part of a well-formed UTF-8 sequence (the link checks a frame's UTF-8
         * before it is read, but a page is also read from bytes no link checked: anything else goes
         * to Jackson, whose refusal or reading of it stays as it was).
         */
        private void string() throws GiveUp {
            string(MAX_STRING);
        }

        private void string(int maxLength) throws GiveUp {
            int k = i + 1;
            boolean escaped = false;
            boolean ascii = true;
            while (true) {
                k = PlainStringBytes.skip(b, k, n); // plain bytes, 8 a step
                if (k >= n) {
                    throw new GiveUp();
                }
                byte c = b[k];
                if (c == '"') {
                    break;
                }
                if (c < 0x20) { // a control character, or (negative) a byte above 0x7F
                    if (c >= 0) {
                        throw new GiveUp();
                    }
                    int length = dev.synapsehub.federation.link.WellFormedUtf8.sequence(b, k, n);
                    if (length < 0) {
                        throw new GiveUp();
                    }
                    ascii = false;
                    k += length;
                    continue;
                }
                if (c == '\\') {
                    escaped = true;
                    k++;
                    if (k >= n) {
                        throw new GiveUp();
                    }
                    switch (b[k]) {
                        case '"', '\\', '/', 'b', 'f', 'n', 'r', 't' -> { }
                        case 'u' -> {
                            if (k + 4 >= n) {
                                throw new GiveUp();
                            }
                            for (int h = 1; h <= 4; h++) {
                                if (Character.digit(b[k + h], 16) < 0) {
                                    throw new GiveUp();
                                }
                            }
                            k += 4;
                        }
                        default -> throw new GiveUp();
                    }
                }
                k++;
            }
            if (k - i - 1 > maxLength) {
                throw new GiveUp();
            }
            strStart = i + 1;
            strEnd = k;
            strEscaped = escaped;
            strAscii = ascii;
            i = k + 1;
        }

        private static boolean isNumber(byte c) {
            return c == '-' || (c >= '0' && c <= '9');
        }

        /** A JSON number at {@code b[i]}: {@code -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?}. */
        private void number() throws GiveUp {
            int k = i;
            if (k < n && b[k] == '-') {
                k++;
            }
            if (k >= n) {
                throw new GiveUp();
            }
            if (b[k] == '0') {
                k++;
            } else if (b[k] >= '1' && b[k] <= '9') {
                k = digits(k);
            } else {
                throw new GiveUp();
            }
            boolean integral = true;
            if (k < n && b[k] == '.') {
                integral = false;
                k = atLeastOneDigit(k + 1);
            }
            if (k < n && (b[k] == 'e' || b[k] == 'E')) {
                integral = false;
                k++;
                if (k < n && (b[k] == '+' || b[k] == '-')) {
                    k++;
                }
                k = atLeastOneDigit(k);
            }
            if (k - i > MAX_NUMBER) {
                throw new GiveUp();
            }
            if (k < n && (b[k] >= '0' && b[k] <= '9')) {
                throw new GiveUp(); // a leading zero: Jackson refuses it
            }
            numStart = i;
            numEnd = k;
            numIntegral = integral;
            i = k;
        }

        private int digits(int k) {
            while (k < n && b[k] >= '0' && b[k] <= '9') {
                k++;
            }
            return k;
        }

        private int atLeastOneDigit(int k) throws GiveUp {
            int end = digits(k);
            if (end == k) {
                throw new GiveUp();
            }
            return end;
        }

        /** The integral number just read, which has at most 18 digits. */
        private long longValue() throws GiveUp {
            int k = numStart;
            boolean negative = b[k] == '-';
            if (negative) {
                k++;
            }
            if (numEnd - k > MAX_LONG_DIGITS) {
                throw new GiveUp(); // Jackson's long, or a big integer's low bits: read by Jackson
            }
            long v = 0;
            for (; k < numEnd; k++) {
                v = v * 10 + (b[k] - '0');
            }
            return negative ? -v : v;
        }

        /** {@code null}, {@code true} or {@code false}, followed by no letter or digit. */
        private void literal() throws GiveUp {
            byte[] word = b[i] == 'n' ? NULL : b[i] == 't' ? TRUE : FALSE;
            if (i + word.length > n || !java.util.Arrays.equals(b, i, i + word.length, word, 0, word.length)) {
                throw new GiveUp();
            }
            i += word.length;
        }

        private static final byte[] NULL = ascii("null");
        private static final byte[] TRUE = ascii("true");
        private static final byte[] FALSE = ascii("false");

        /** Passes over any value, checking its grammar. */
        private void skipValue(int depth) throws GiveUp {
            if (depth > MAX_DEPTH) {
                throw new GiveUp();
            }
            byte c = peek();
            switch (c) {
                case '"' -> string();
                case '{' -> {
                    i++;
                    if (peek() == '}') {
                        i++;
                        return;
                    }
                    do {
                        name();
                        skipValue(depth + 1);
                    } while (more('}'));
                }
                case '[' -> {
                    i++;
                    if (peek() == ']') {
                        i++;
                        return;
                    }
                    do {
                        skipValue(depth + 1);
                    } while (more(']'));
                }
                case 'n', 't', 'f' -> literal();
                default -> {
                    if (!isNumber(c)) {
                        throw new GiveUp();
                    }
                    number();
                }
            }
            // a value must be followed by a delimiter or whitespace: "nullx" and "1x" are not JSON
            if (i < n) {
                byte d = b[i];
                if (d != ',' && d != '}' && d != ']' && d != ' ' && d != '\n' && d != '\r' && d != '\t') {
                    throw new GiveUp();
                }
            }
        }
    }
}
