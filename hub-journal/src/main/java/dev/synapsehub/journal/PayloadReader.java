package dev.synapsehub.journal;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.json.JsonWriteFeature;

import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * One stored payload object, read as strictly as a wire frame: the one field reader of
 * {@link EventCodec} and {@link MessagingEventCodec}.
 *
 * <p>A member the event needs that is missing, {@code null}, of another JSON type, or a number
 * that is not finite makes the row corrupt ({@link EventCodec.CorruptPayloadException}), so no
 * decoded event carries a value its {@code apply} cannot take. Optional members fall back to
 * their default only when absent (older and reference logs omit some); a present {@code null} is
 * accepted only where the event itself allows null ({@link #nullableText}, {@link #object}).
 *
 * <p>The object is read in one streaming pass into plain values (no Jackson tree, no mapper
 * context per row: replay decodes millions of these). A repeated member name keeps its last
 * occurrence, which moves to the end, as Jackson's tree model would. With offsets kept, the raw
 * text of every member and the position of its name are available (chat rows are cut there).
 */
final class PayloadReader {
    /** The payload factory: ASCII-escaped output, exact and fast double parsing. */
    static final JsonFactory FACTORY = JsonFactory.builder()
            .enable(JsonWriteFeature.ESCAPE_NON_ASCII)
            // exact (correctly rounded) like Double.parseDouble, only faster
            .enable(StreamReadFeature.USE_FAST_DOUBLE_PARSER)
            .build();

    /** JSON {@code null}: distinct from an absent member. */
    private static final Object NULL = new Object();
    /** What {@link #get} answers for a member that is not there. */
    private static final Object ABSENT = new Object();
    /** Integral doubles beyond this are not exact longs; refused as integers. */
    private static final double MAX_EXACT = 9.0e15;

    private final Source source;
    /** Member names, values and (offsets kept) positions, in order; parallel arrays, {@code size} used. */
    private String[] names = new String[16];
    /** The names' hash codes (cached by {@code String}), compared before the names. */
    private int[] hashes = new int[16];
    private Object[] values = new Object[16];
    private int[] offsets;
    private int size;
    /** Where {@link #find} starts. */
    private int hint;

    private PayloadReader(Source source, boolean keepOffsets) {
        this.source = source;
        this.offsets = keepOffsets ? new int[16 * 3] : null;
    }

    /** The text or bytes a payload was read from, so raw member text can be cut out of it. */
    private record Source(String text, byte[] utf8) {
        String slice(int start, int end) {
            return text != null ? text.substring(start, end) : new String(utf8, start, end - start, StandardCharsets.UTF_8);
        }

        int offset(JsonLocation at) {
            return (int) (text != null ? at.getCharOffset() : at.getByteOffset());
        }
    }

    /** Reads a payload text; with {@code offsets}, {@link #raw} and {@link #nameOffset} work. */
    static PayloadReader parse(String text, boolean offsets) throws EventCodec.CorruptPayloadException {
        if (text == null) {
            throw corrupt("null payload");
        }
        try (JsonParser p = FACTORY.createParser(text)) {
            return parse(p, new Source(text, null), offsets);
        } catch (IOException | RuntimeException e) {
            throw new EventCodec.CorruptPayloadException("not a JSON object: " + e.getMessage(), e);
        }
    }

    /** Reads a payload from its UTF-8 bytes (no {@code String} of the whole payload). */
    static PayloadReader parse(byte[] utf8, boolean offsets) throws EventCodec.CorruptPayloadException {
        if (utf8 == null) {
            throw corrupt("null payload");
        }
        try (JsonParser p = FACTORY.createParser(utf8)) {
            return parse(p, new Source(null, utf8), offsets);
        } catch (IOException | RuntimeException e) {
            throw new EventCodec.CorruptPayloadException("not a JSON object: " + e.getMessage(), e);
        }
    }

    private static PayloadReader parse(JsonParser p, Source source, boolean offsets)
            throws IOException, EventCodec.CorruptPayloadException {
        if (p.nextToken() != JsonToken.START_OBJECT) {
            throw corrupt("payload is not a JSON object");
        }
        PayloadReader reader = readObject(p, source, offsets);
        if (p.nextToken() != null) {
            throw corrupt("trailing content after the payload object");
        }
        return reader;
    }

    private static PayloadReader readObject(JsonParser p, Source source, boolean offsets) throws IOException {
        PayloadReader reader = new PayloadReader(source, offsets);
        for (JsonToken t = p.nextToken(); t == JsonToken.FIELD_NAME; t = p.nextToken()) {
            String name = p.currentName();
            int nameOffset = offsets ? source.offset(p.currentTokenLocation()) : -1;
            JsonToken token = p.nextToken();
            int start = offsets ? source.offset(p.currentTokenLocation()) : -1;
            Object value = readValue(p, token, source, offsets);
            int end = offsets ? source.offset(p.currentLocation()) : -1;
            reader.add(name, value, nameOffset, start, end);
        }
        return reader;
    }

    /** Appends a member; a repeated name drops its earlier occurrence (the last one wins, last in order). */
    private void add(String name, Object value, int nameOffset, int start, int end) {
        int previous = find(name);
        if (previous >= 0) {
            int tail = size - previous - 1;
            System.arraycopy(hashes, previous + 1, hashes, previous, tail);
            System.arraycopy(names, previous + 1, names, previous, tail);
            System.arraycopy(values, previous + 1, values, previous, tail);
            if (offsets != null) {
                System.arraycopy(offsets, 3 * (previous + 1), offsets, 3 * previous, 3 * tail);
            }
            size--;
        }
        if (size == names.length) {
            hashes = Arrays.copyOf(hashes, size * 2);
            names = Arrays.copyOf(names, size * 2);
            values = Arrays.copyOf(values, size * 2);
            if (offsets != null) {
                offsets = Arrays.copyOf(offsets, size * 6);
            }
        }
        hashes[size] = name.hashCode();
        names[size] = name;
        values[size] = value;
        if (offsets != null) {
            offsets[3 * size] = nameOffset;
            offsets[3 * size + 1] = start;
            offsets[3 * size + 2] = end;
        }
        size++;
    }

    /**
     * Index of the member, -1 when absent: a scan of a dozen names that starts after the member
     * found last, so reading members in the order they were written costs one comparison each.
     */
    private int find(String name) {
        int hash = name.hashCode();
        for (int n = 0, i = hint; n < size; n++, i = i + 1 == size ? 0 : i + 1) {
            if (hashes[i] == hash && names[i].equals(name)) {
                hint = i + 1 == size ? 0 : i + 1;
                return i;
            }
        }
        return -1;
    }

    /** The member's value, {@link #ABSENT} when there is none. */
    private Object get(String name) {
        int i = find(name);
        return i < 0 ? ABSENT : values[i];
    }

    private static Object readValue(JsonParser p, JsonToken token, Source source, boolean offsets) throws IOException {
        switch (token) {
            case VALUE_STRING:
                return p.getText();
            case VALUE_NUMBER_INT:
                return p.getNumberValue();
            case VALUE_NUMBER_FLOAT:
                return p.getDoubleValue();
            case VALUE_TRUE:
                return Boolean.TRUE;
            case VALUE_FALSE:
                return Boolean.FALSE;
            case VALUE_NULL:
                return NULL;
            case START_ARRAY: {
                List<Object> items = new ArrayList<>();
                for (JsonToken t = p.nextToken(); t != JsonToken.END_ARRAY; t = p.nextToken()) {
                    items.add(readValue(p, t, source, offsets));
                }
                return items;
            }
            case START_OBJECT:
                return readObject(p, source, offsets);
            default:
                throw new IOException("unexpected token " + token);
        }
    }

    // ------------------------------------------------------------------------------ members

    /** True when the member is present (even as null). */
    boolean has(String name) {
        return find(name) >= 0;
    }

    /** Number of members. */
    int size() {
        return size;
    }

    /** Position of the member among all members (0-based), -1 when absent. */
    int indexOf(String name) {
        return find(name);
    }

    /** Source offset of the member's name token (offsets kept), -1 when absent. */
    int nameOffset(String name) {
        int i = find(name);
        return i < 0 || offsets == null ? -1 : offsets[3 * i];
    }

    /** The member's value exactly as written in the source (offsets kept), or null when absent. */
    String raw(String name) {
        int i = find(name);
        return i < 0 || offsets == null ? null : source.slice(offsets[3 * i + 1], offsets[3 * i + 2]);
    }

    // ------------------------------------------------------------------------------ strings

    /** A required string. */
    String text(String name) throws EventCodec.CorruptPayloadException {
        return asText(name, present(name));
    }

    /** A required string with something besides white space in it (ids, names). */
    String id(String name) throws EventCodec.CorruptPayloadException {
        String s = text(name);
        if (s.isBlank()) {
            throw corrupt(name + " is blank");
        }
        return s;
    }

    /** An optional string: {@code dflt} when absent; a present null is corrupt. */
    String text(String name, String dflt) throws EventCodec.CorruptPayloadException {
        Object v = get(name);
        return v == ABSENT ? dflt : asText(name, v);
    }

    /** A string the event allows to be null: absent or null give null. */
    String nullableText(String name) throws EventCodec.CorruptPayloadException {
        Object v = get(name);
        return v == ABSENT || v == NULL ? null : asText(name, v);
    }

    private static String asText(String name, Object v) throws EventCodec.CorruptPayloadException {
        if (v instanceof String s) {
            return s;
        }
        throw wrong(name, "a string", v);
    }

    // ------------------------------------------------------------------------------ numbers

    /** A required finite number. */
    double number(String name) throws EventCodec.CorruptPayloadException {
        return asNumber(name, present(name));
    }

    /** An optional finite number: {@code dflt} when absent. */
    double number(String name, double dflt) throws EventCodec.CorruptPayloadException {
        Object v = get(name);
        return v == ABSENT ? dflt : asNumber(name, v);
    }

    private static double asNumber(String name, Object v) throws EventCodec.CorruptPayloadException {
        if (v instanceof Number n && !(v instanceof BigDecimal)) {
            double d = n.doubleValue();
            if (Double.isFinite(d)) {
                return d;
            }
            throw corrupt(name + " is not a finite number");
        }
        throw wrong(name, "a number", v);
    }

    /** A required integer (an integral float below 2^53 is accepted, as reference logs write some). */
    long integer(String name) throws EventCodec.CorruptPayloadException {
        return asInteger(name, present(name));
    }

    /** An optional integer: {@code dflt} when absent. */
    long integer(String name, long dflt) throws EventCodec.CorruptPayloadException {
        Object v = get(name);
        return v == ABSENT ? dflt : asInteger(name, v);
    }

    /** An optional integer no lower than {@code min}. */
    long integer(String name, long dflt, long min) throws EventCodec.CorruptPayloadException {
        long v = integer(name, dflt);
        if (v < min) {
            throw corrupt(name + " is " + v + ", below " + min);
        }
        return v;
    }

    private static long asInteger(String name, Object v) throws EventCodec.CorruptPayloadException {
        if (v instanceof Integer || v instanceof Long) {
            return ((Number) v).longValue();
        }
        if (v instanceof BigInteger) {
            throw corrupt(name + " is out of range");
        }
        if (v instanceof Double d && d == Math.rint(d) && Math.abs(d) < MAX_EXACT) {
            return d.longValue();
        }
        throw wrong(name, "an integer", v);
    }

    // ------------------------------------------------------------------------------ others

    /** An optional boolean: {@code dflt} when absent. */
    boolean bool(String name, boolean dflt) throws EventCodec.CorruptPayloadException {
        Object v = get(name);
        if (v == ABSENT) {
            return dflt;
        }
        if (v instanceof Boolean b) {
            return b;
        }
        throw wrong(name, "a boolean", v);
    }

    /** An optional array of strings: empty when absent. */
    List<String> strings(String name) throws EventCodec.CorruptPayloadException {
        Object v = get(name);
        if (v == ABSENT) {
            return List.of();
        }
        if (!(v instanceof List<?> items)) {
            throw wrong(name, "an array", v);
        }
        List<String> out = new ArrayList<>(items.size());
        for (Object item : items) {
            if (!(item instanceof String s)) {
                throw corrupt(name + " must hold strings only");
            }
            out.add(s);
        }
        return out;
    }

    /** The objects of an optional array member; null when absent, null, or holding anything but objects. */
    List<PayloadReader> objects(String name) {
        Object v = get(name);
        if (!(v instanceof List<?> items)) {
            return null;
        }
        List<PayloadReader> out = new ArrayList<>(items.size());
        for (Object item : items) {
            if (!(item instanceof PayloadReader nested)) {
                return null;
            }
            out.add(nested);
        }
        return out;
    }

    /** An object the event allows to be absent or null (then null). */
    PayloadReader object(String name) throws EventCodec.CorruptPayloadException {
        Object v = get(name);
        if (v == ABSENT || v == NULL) {
            return null;
        }
        if (v instanceof PayloadReader nested) {
            return nested;
        }
        throw wrong(name, "an object or null", v);
    }

    /** True when the member is present and an object. */
    boolean isObject(String name) {
        return get(name) instanceof PayloadReader;
    }

    /** An optional object of string values, sorted by key: empty when absent. */
    Map<String, String> stringMap(String name) throws EventCodec.CorruptPayloadException {
        PayloadReader nested = object(name);
        if (nested == null) {
            if (has(name)) {
                throw corrupt(name + " is null");
            }
            return Map.of();
        }
        Map<String, String> out = new TreeMap<>();
        for (int i = 0; i < nested.size; i++) {
            out.put(nested.names[i], asText(name + "." + nested.names[i], nested.values[i]));
        }
        return Collections.unmodifiableMap(out);
    }

    private Object present(String name) throws EventCodec.CorruptPayloadException {
        Object v = get(name);
        if (v == ABSENT) {
            throw corrupt("lacks " + name);
        }
        return v;
    }

    private static EventCodec.CorruptPayloadException wrong(String name, String expected, Object v) {
        String actual = v == NULL ? "null" : v instanceof String ? "a string" : v instanceof Boolean ? "a boolean"
                : v instanceof List ? "an array" : v instanceof PayloadReader ? "an object" : "a number";
        return corrupt(name + " must be " + expected + ", not " + actual);
    }

    static EventCodec.CorruptPayloadException corrupt(String message) {
        return new EventCodec.CorruptPayloadException(message);
    }
}
