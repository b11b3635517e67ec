package dev.synapsehub.federation.serve;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.synapsehub.journal.StoredEvent;
import dev.synapsehub.net.wire.PythonFloatFormat;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A page's events written from the stored bytes ({@link LogServer#writeEvents}) are byte for byte
 * what the text-based writer produced (each payload read as a {@code String}, checked by a Jackson
 * parse, then encoded again), for ASCII payloads, raw UTF-8, ill-formed UTF-8, payloads larger than
 * the generator's buffer, and damaged rows; the page stays well-formed UTF-8 and parseable JSON
 * whatever the rows hold (a damaged row goes as {@code null}).
 */
class PageEventsBytesTest {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    /** A payload as one of the old writers put it: raw text, or null. */
    private interface PayloadText {
        String of(StoredEvent e);
    }

    /** The envelope both old writers shared, {@code payload} as {@code payloadText} decides (null: JSON null). */
    private static void writeThroughGenerator(JsonGenerator g, List<StoredEvent> events, PayloadText payloadText)
            throws IOException {
        for (StoredEvent e : events) {
            g.writeStartObject();
            g.writeNumberField("seq", e.seq());
            g.writeFieldName("ts");
            g.writeRawValue(PythonFloatFormat.format(e.ts()));
            g.writeStringField("kind", e.kind());
            g.writeFieldName("payload");
            String raw = payloadText.of(e);
            if (raw != null) {
                g.writeRawValue(raw);
            } else {
                g.writeNull();
            }
            g.writeEndObject();
        }
    }

    /** The writer before the stored bytes were copied: the payload as text, through the generator. */
    private static void writeAsText(JsonGenerator g, List<StoredEvent> events) throws IOException {
        writeThroughGenerator(g, events, e -> {
            String p = e.payload();
            return p != null && p.startsWith("{") && p.endsWith("}") && jacksonReadsOneObject(p) ? p : null;
        });
    }

    /** The reference check: Jackson with its default limits reads exactly one object and nothing after it. */
    private static boolean jacksonReadsOneObject(String text) {
        try (JsonParser p = MAPPER.getFactory().createParser(text.getBytes(StandardCharsets.UTF_8))) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return false;
            }
            p.skipChildren();
            return p.nextToken() == null;
        } catch (IOException notJson) {
            return false;
        }
    }

    /**
     * The generator path {@link LogServer#writeEvents} replaced (main before branch serve4): a
     * checked ASCII object raw, a non-ASCII one through its text, checked again, else null.
     */
    private static void writeByGenerator(JsonGenerator g, List<StoredEvent> events) throws IOException {
        writeThroughGenerator(g, events, e -> {
            byte[] p = e.payloadUtf8();
            StoredObjectCheck.Shape shape = p == null ? StoredObjectCheck.Shape.NOT_OBJECT : StoredObjectCheck.shape(p);
            if (shape == StoredObjectCheck.Shape.ASCII_OBJECT) {
                return new String(p, StandardCharsets.US_ASCII);
            }
            String text = shape == StoredObjectCheck.Shape.NOT_OBJECT ? null : e.payload();
            return text != null
                    && StoredObjectCheck.shape(text.getBytes(StandardCharsets.UTF_8)) != StoredObjectCheck.Shape.NOT_OBJECT
                    ? text : null;
        });
    }

    interface Writer {
        void write(JsonGenerator g, List<StoredEvent> events) throws IOException;
    }

    /** The page's events as {@link LogServer#writeEvents} writes them, inside {@code [ ]}. */
    private static byte[] page(List<StoredEvent> events) throws IOException {
        io.netty.buffer.ByteBuf out = io.netty.buffer.Unpooled.buffer();
        try {
            out.writeByte('[');
            LogServer.writeEvents(out, events);
            out.writeByte(']');
            return io.netty.buffer.ByteBufUtil.getBytes(out);
        } finally {
            out.release();
        }
    }

    private static byte[] page(List<StoredEvent> events, Writer writer) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (JsonGenerator g = MAPPER.createGenerator(out)) {
            g.writeStartArray();
            writer.write(g, events);
            g.writeEndArray();
        }
        return out.toByteArray();
    }

    private static void strictUtf8(byte[] b) throws CharacterCodingException {
        StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(b));
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void storedBytesGoOutAsTheTextWriterWroteThem() throws Exception {
        StringBuilder big = new StringBuilder("{\"note\":\"");
        for (int k = 0; k < 30_000; k++) {
            big.append((char) ('a' + k % 26));
        }
        big.append("\"}");
        List<StoredEvent> events = List.of(
                new StoredEvent(1, 1.5, "claim", utf8("{\"task_id\":\"t\\u00e9\",\"n\":1}")),
                new StoredEvent(2, 1.7e9, "release", utf8("{\"task_id\":\"t\"}")),
                new StoredEvent(3, 2.0, "chat", utf8("{\"text\":\"raw caf\u00e9 \uD834\uDD1E\"}")), // raw UTF-8 (reference logs)
                new StoredEvent(4, 2.0, "claim", new byte[] {'{', '"', 'a', '"', ':', '"', (byte) 0xc0, (byte) 0xaf, '"', '}'}),
                new StoredEvent(5, 2.0, "claim", new byte[] {'{', '"', 'a', '"', ':', '"', (byte) 0xed, (byte) 0xa0, (byte) 0x80, '"', '}'}),
                new StoredEvent(6, 2.0, "claim", new byte[] {'{', '"', 'a', '"', ':', '1', (byte) 0xe2, '}'}),
                new StoredEvent(7, 2.0, "claim", utf8("[1,2]")),
                new StoredEvent(8, 2.0, "claim", utf8("")),
                new StoredEvent(9, 2.0, "claim", null),
                new StoredEvent(10, 2.0, "claim", utf8("{")),
                new StoredEvent(11, 2.0, "claim", utf8("}")),
                new StoredEvent(12, 2.0, "claim", new byte[] {'{', '"', 'x', '"', ':', '1', '}', (byte) 0xff}),
                new StoredEvent(13, 2.0, "k\u00e9nd", utf8(big.toString())),
                new StoredEvent(14, 2.0, "claim", utf8(big.toString())));
        byte[] fromBytes = page(events);
        assertThat(fromBytes).isEqualTo(page(events, PageEventsBytesTest::writeAsText));
        strictUtf8(fromBytes);
        // the well-formed rows read back as JSON: the object as stored, a damaged row as null
        byte[] wellFormed = page(List.of(events.get(0), events.get(2), events.get(6), events.get(8)));
        assertThat(MAPPER.readTree(wellFormed).get(0).get("payload").get("task_id").asText()).isEqualTo("t\u00e9");
        assertThat(MAPPER.readTree(wellFormed).get(1).get("payload").get("text").asText()).isEqualTo("raw caf\u00e9 \uD834\uDD1E");
        assertThat(MAPPER.readTree(wellFormed).get(2).get("payload").isNull()).isTrue();
        assertThat(MAPPER.readTree(wellFormed).get(3).get("payload").isNull()).isTrue();
    }

    @Test
    void randomRowsMatchTheTextWriter() throws Exception {
        Random r = new Random(12L);
        byte[] alphabet = {'{', '}', '"', 'a', '\\', ':', ',', '1', ' ', 0x7f, 0x00, (byte) 0x80, (byte) 0xc3, (byte) 0xa9,
            (byte) 0xe2, (byte) 0x82, (byte) 0xac, (byte) 0xf0, (byte) 0x9f, (byte) 0xff};
        for (int round = 0; round < 200; round++) {
            List<StoredEvent> events = new ArrayList<>();
            for (int k = 0; k < 50; k++) {
                byte[] p = new byte[r.nextInt(40)];
                for (int j = 0; j < p.length; j++) {
                    p[j] = alphabet[r.nextInt(alphabet.length)];
                }
                if (p.length > 1 && r.nextBoolean()) {
                    p[0] = '{';
                    p[p.length - 1] = '}';
                }
                events.add(new StoredEvent(k + 1, r.nextDouble() * 1e9, "claim", r.nextInt(20) == 0 ? null : p));
            }
            byte[] fromBytes = page(events);
            assertThat(fromBytes).isEqualTo(page(events, PageEventsBytesTest::writeAsText));
            strictUtf8(fromBytes);
        }
    }

    /**
     * A varied journal (awkward floats, unicode in payloads and kinds, nested payloads, damaged
     * rows, large seqs) renders byte for byte as the generator path this writer replaced did.
     */
    @Test
    void aVariedJournalRendersAsTheGeneratorPathDid() throws Exception {
        Random r = new Random(2026L);
        double[] awkward = {1796283204.4451, 1796283204.4450998, 0.1, 1e-5, 1e16, 123456789012345680.0, 5e-324,
            Double.MIN_NORMAL, Double.MAX_VALUE, -0.0, 0.0, -1.5, 2.0, 0x1p51, Math.nextDown(0x1p51), 1e15 + 0.5,
            9.999999999999999e15, 0.30000000000000004, Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY};
        String[] kinds = {"claim", "release", "task_update", "k\u00e9nd", "qu\"o\\te", "tab\tnl\n", "\uD834\uDD1E"};
        for (int round = 0; round < 100; round++) {
            List<StoredEvent> events = new ArrayList<>();
            long seq = round == 0 ? Long.MAX_VALUE - 100 : r.nextInt(1000);
            for (int k = 0; k < 60; k++) {
                double ts = switch (r.nextInt(4)) {
                    case 0 -> awkward[r.nextInt(awkward.length)];
                    case 1 -> 1796283204.445 + r.nextInt(1_000_000) * 1e-4;
                    case 2 -> Double.longBitsToDouble(r.nextLong());
                    default -> r.nextInt(1_000_000) / 1000.0;
                };
                byte[] p = switch (r.nextInt(7)) {
                    case 6 -> concat(utf8("{\"long\":\"abcdefghijklmnop"), new byte[] {(byte) (0x80 + r.nextInt(128))},
                            utf8("qrstuvwxyz0123456789\"}")); // a lone byte in the middle of a long string
                    case 0 -> utf8("{\"text\":\"caf\u00e9 \uD834\uDD1E \u4e2d\u6587\",\"n\":" + r.nextInt() + "}");
                    case 1 -> new byte[] {'{', '"', 'a', '"', ':', '"', (byte) 0xc3, '"', '}'}; // cut sequence
                    case 2 -> utf8(randomObject(r, 0));
                    case 3 -> utf8("{\"a\":{\"b\":[1,{\"c\":[true,null,-0.5e+3]}]},\"d\":\"\\u00e9\"}");
                    case 4 -> r.nextInt(4) == 0 ? null : utf8("{\"a\":1,}");
                    default -> utf8("{\"task_id\":\"task-" + k + "\",\"lease_expires_at\":" + ts + "}");
                };
                events.add(new StoredEvent(seq++, ts, kinds[r.nextInt(kinds.length)], p));
            }
            assertThat(page(events)).isEqualTo(page(events, PageEventsBytesTest::writeByGenerator));
        }
    }

    @Test
    void damagedRowsGoAsNullAndThePageStaysReadable() throws Exception {
        List<StoredEvent> events = List.of(
                new StoredEvent(1, 1.0, "claim", utf8("{\"task_id\":\"a\"}")),
                new StoredEvent(2, 1.0, "claim", utf8("{\"task_id\":\"b\",}")), // trailing comma
                new StoredEvent(3, 1.0, "claim", utf8("{\"task_id\":\"c}")), // unterminated string
                new StoredEvent(4, 1.0, "claim", utf8("{\"a\":1}{\"b\":2}")), // two objects
                new StoredEvent(5, 1.0, "claim", utf8("{\"a\":[1,2}")), // unbalanced
                new StoredEvent(6, 1.0, "claim", utf8("{\"a\":01}")), // leading zero
                new StoredEvent(7, 1.0, "claim", utf8("{\"a\":\"\\" + "u00e\"}")), // short escape
                new StoredEvent(8, 1.0, "claim", utf8("{\"a\":\"tab\there\"}")), // raw control char
                new StoredEvent(9, 1.0, "claim", utf8("{\"a\":\"caf\u00e9\",}")), // non-ASCII and damaged
                new StoredEvent(10, 1.0, "claim", utf8("{\"a\":" + "1".repeat(1500) + "}")), // past Jackson's number limit
                new StoredEvent(11, 1.0, "claim", utf8("{\"a\":" + "[".repeat(800) + "]".repeat(800) + "}")), // too deep
                new StoredEvent(12, 1.0, "release", utf8("{\"task_id\":\"z\"}")));
        byte[] bytes = page(events);
        com.fasterxml.jackson.databind.JsonNode read = MAPPER.readTree(bytes); // the whole page parses
        assertThat(read.size()).isEqualTo(events.size());
        assertThat(read.get(0).get("payload").get("task_id").asText()).isEqualTo("a");
        for (int k = 1; k < events.size() - 1; k++) {
            assertThat(read.get(k).get("payload").isNull()).as("row %d", k + 1).isTrue();
        }
        assertThat(read.get(events.size() - 1).get("payload").get("task_id").asText()).isEqualTo("z");
    }

    @Test
    void mutatedObjectsAreCheckedAsJacksonReadsThem() throws Exception {
        Random r = new Random(7L);
        byte[] alphabet = utf8("{}[]\":,\\/ \t\n0123456789-+.eEtrufalsn\u00e9x");
        for (int round = 0; round < 400; round++) {
            List<StoredEvent> events = new ArrayList<>();
            for (int k = 0; k < 25; k++) {
                byte[] p = utf8(randomObject(r, 0));
                for (int m = r.nextInt(3); m > 0 && p.length > 2; m--) { // replace, delete or insert one byte
                    int at = 1 + r.nextInt(p.length - 2);
                    byte b = alphabet[r.nextInt(alphabet.length)];
                    switch (r.nextInt(3)) {
                        case 0 -> p[at] = b;
                        case 1 -> p = concat(java.util.Arrays.copyOfRange(p, 0, at), java.util.Arrays.copyOfRange(p, at + 1, p.length));
                        default -> p = concat(java.util.Arrays.copyOfRange(p, 0, at), new byte[] {b},
                                java.util.Arrays.copyOfRange(p, at, p.length));
                    }
                }
                events.add(new StoredEvent(k + 1, 1.0, "claim", p));
            }
            byte[] fromBytes = page(events);
            assertThat(fromBytes).isEqualTo(page(events, PageEventsBytesTest::writeAsText));
            MAPPER.readTree(fromBytes);
        }
    }

    private static String randomObject(Random r, int depth) {
        StringBuilder s = new StringBuilder("{");
        int members = r.nextInt(4);
        for (int k = 0; k < members; k++) {
            s.append(k == 0 ? "" : ",").append(r.nextBoolean() ? " " : "").append("\"k").append(k)
                    .append(r.nextInt(5) == 0 ? "\\u00e9\\n" : "").append("\":").append(randomValue(r, depth));
        }
        return s.append("}").toString();
    }

    private static String randomValue(Random r, int depth) {
        return switch (r.nextInt(depth > 2 ? 6 : 8)) {
            case 0 -> "\"v\u00e9\\\"\\/\"";
            case 1 -> String.valueOf(r.nextInt(2000) - 1000);
            case 2 -> "-0.5e+" + r.nextInt(20);
            case 3 -> r.nextBoolean() ? "true" : "false";
            case 4 -> "null";
            case 5 -> "1.25E-3";
            case 6 -> randomObject(r, depth + 1);
            default -> "[" + randomValue(r, depth + 1) + "," + randomValue(r, depth + 1) + "]";
        };
    }

    private static byte[] concat(byte[]... parts) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }
}
