package dev.synapsehub.federation.serve;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link StoredObjectCheck#shape} decides every payload as a plain byte-at-a-time reading of the same
 * rules does ({@link Reference}, written apart from the scan: recursive, no word tricks): payloads
 * like the hub's, with strings of every length around the eight-byte steps, a special byte (quote,
 * backslash, control, DEL, bytes at or above 0x80, white space, brackets) at every position of such a
 * string, and 200,000 damaged copies (bytes inserted, replaced, deleted). A shape that differs would
 * let a damaged row into a page or keep a sound one out.
 */
class StoredObjectShapeTest {

    private static final int[] SPECIAL = {'"', '\\', 0x00, 0x01, 0x1f, 0x20, 0x7f, 0x80, 0xbf, 0xc2, 0xc3, 0xe0, 0xe2,
        0xed, 0xf0, 0xf4, 0xf5, 0xff, '{', '}', '[', ']', ':', ',', '0', '1', '-', '+', 'e', '.', 'u', 'a', 'n', 't',
        '/', ' ', '\n', '\r', '\t'};

    @Test
    void aSpecialByteAtEveryPositionOfStringsOfEveryLength() {
        int checked = 0;
        for (int length = 0; length <= 26; length++) {
            for (int at = 0; at <= length; at++) {
                for (int special : SPECIAL) {
                    for (String prefix : List.of("", "\"k\":1,", "\"key_of_some_length\":\"v\",")) {
                        byte[] text = new byte[length];
                        for (int k = 0; k < length; k++) {
                            text[k] = (byte) ('a' + (k % 26));
                        }
                        byte[] payload = hubLike(prefix, text, at, special);
                        assertSameShape(payload);
                        assertSameShape(keyed(text, at, special));
                        checked++;
                    }
                }
            }
        }
        assertThat(checked).isGreaterThan(10_000);
    }

    @Test
    void damagedPayloadsAreDecidedAsByteAtATime() {
        SplittableRandom r = new SplittableRandom(11L);
        List<byte[]> sound = soundPayloads(r);
        int refused = 0;
        int kept = 0;
        for (int round = 0; round < 200_000; round++) {
            byte[] p = sound.get(r.nextInt(sound.size()));
            int damages = round % 10 == 0 ? 0 : 1 + r.nextInt(3);
            for (int d = 0; d < damages; d++) {
                p = damage(p, r);
            }
            String shape = assertSameShape(p);
            if (shape.equals("NOT_OBJECT")) {
                refused++;
            } else {
                kept++;
            }
        }
        assertThat(refused).as("refused").isGreaterThan(50_000);
        assertThat(kept).as("kept").isGreaterThan(20_000);
    }

    private static String assertSameShape(byte[] p) {
        String expected = Reference.shape(p);
        assertThat(StoredObjectCheck.shape(p).name()).as("%s", new String(p, StandardCharsets.ISO_8859_1)).isEqualTo(expected);
        return expected;
    }

    /** The benchmark's claim payload, one of its string values replaced by {@code text} with {@code special} at {@code at}. */
    private static byte[] hubLike(String prefix, byte[] text, int at, int special) {
        byte[] value = withByte(text, at, special);
        String head = "{" + prefix + "\"task_id\":\"task-17\",\"owner\":\"proj/agent-3\",\"note\":\"";
        String tail = "\",\"claimed_at\":1.7962891920031E9,\"paths\":[\"src/module1\",\"docs/1\"],\"epoch\":2,\"git\":null}";
        return concat(head.getBytes(StandardCharsets.US_ASCII), value, tail.getBytes(StandardCharsets.US_ASCII));
    }

    /** The same in a member name. */
    private static byte[] keyed(byte[] text, int at, int special) {
        return concat("{\"a\":true,\"".getBytes(StandardCharsets.US_ASCII), withByte(text, at, special),
                "\":[0,-1.5e+3,\"x\"]}".getBytes(StandardCharsets.US_ASCII));
    }

    private static byte[] withByte(byte[] text, int at, int special) {
        byte[] out = new byte[text.length + 1];
        System.arraycopy(text, 0, out, 0, at);
        out[at] = (byte) special;
        System.arraycopy(text, at, out, at + 1, text.length - at);
        return out;
    }

    private static List<byte[]> soundPayloads(SplittableRandom r) {
        List<byte[]> out = new ArrayList<>();
        String[] words = {"", "a", "task-9", "proj/agent-12", "working on it", "src/module9999", "ckpt-499999",
            "tâche", "naïve 中文 😀", "esc \\\" \\\\ \\n \\u00e9 \\/", "x".repeat(37), "0123456789abcdefg"};
        for (int k = 0; k < 400; k++) {
            StringBuilder s = new StringBuilder("{");
            int members = r.nextInt(12);
            for (int m = 0; m < members; m++) {
                if (m > 0) {
                    s.append(r.nextInt(8) == 0 ? " , " : ",");
                }
                s.append('"').append(words[r.nextInt(words.length)]).append(m).append('"').append(r.nextInt(8) == 0 ? " : " : ":");
                switch (r.nextInt(7)) {
                    case 0 -> s.append('"').append(words[r.nextInt(words.length)]).append('"');
                    case 1 -> s.append(r.nextInt(1000) - 500);
                    case 2 -> s.append("1.796289").append(r.nextInt(100_000)).append("E9");
                    case 3 -> s.append(r.nextBoolean() ? "true" : r.nextBoolean() ? "false" : "null");
                    case 4 -> s.append("[\"").append(words[r.nextInt(words.length)]).append("\",[],{},-0.5e-7]");
                    case 5 -> s.append("{\"in\":{\"deep\":[1,2,{\"x\":\"").append(words[r.nextInt(words.length)]).append("\"}]}}");
                    default -> s.append("\"").append(words[r.nextInt(words.length)]).append(words[r.nextInt(words.length)]).append('"');
                }
            }
            out.add(s.append('}').toString().getBytes(StandardCharsets.UTF_8));
        }
        return out;
    }

    private static byte[] damage(byte[] p, SplittableRandom r) {
        int at = p.length == 0 ? 0 : r.nextInt(p.length + 1);
        int b = r.nextInt(4) == 0 ? r.nextInt(256) : SPECIAL[r.nextInt(SPECIAL.length)];
        switch (r.nextInt(3)) {
            case 0 -> { // insert
                byte[] out = new byte[p.length + 1];
                System.arraycopy(p, 0, out, 0, at);
                out[at] = (byte) b;
                System.arraycopy(p, at, out, at + 1, p.length - at);
                return out;
            }
            case 1 -> { // replace
                if (at == p.length) {
                    return p;
                }
                byte[] out = p.clone();
                out[at] = (byte) b;
                return out;
            }
            default -> { // delete
                if (at == p.length) {
                    return p;
                }
                byte[] out = new byte[p.length - 1];
                System.arraycopy(p, 0, out, 0, at);
                System.arraycopy(p, at + 1, out, at, p.length - at - 1);
                return out;
            }
        }
    }

    private static byte[] concat(byte[]... parts) {
        int n = 0;
        for (byte[] p : parts) {
            n += p.length;
        }
        byte[] out = new byte[n];
        int at = 0;
        for (byte[] p : parts) {
            System.arraycopy(p, 0, out, at, p.length);
            at += p.length;
        }
        return out;
    }

    /**
     * The rules of {@link StoredObjectCheck} read one byte at a time by recursive descent: one JSON
     * object filling the bytes, at most {@link StoredObjectCheck#MAX_DEPTH} nested containers, numbers of at
     * most {@link StoredObjectCheck#MAX_NUMBER} bytes, names of at most {@link StoredObjectCheck#MAX_NAME}
     * bytes; a byte at or above 0x80 allowed in strings, a well-formed UTF-8 sequence taken whole.
     */
    private static final class Reference {
        private final byte[] b;
        private int i;
        private boolean ascii = true;
        private boolean utf8 = true;

        private Reference(byte[] b) {
            this.b = b;
        }

        static String shape(byte[] b) {
            if (b.length < 2 || b[0] != '{' || b[b.length - 1] != '}') {
                return "NOT_OBJECT";
            }
            Reference r = new Reference(b);
            try {
                r.container(1);
                if (r.i != b.length) {
                    return "NOT_OBJECT";
                }
            } catch (IllegalArgumentException refused) {
                return "NOT_OBJECT";
            }
            return r.ascii ? "ASCII_OBJECT" : r.utf8 ? "UTF8_OBJECT" : "OBJECT";
        }

        private int at() {
            if (i >= b.length) {
                throw new IllegalArgumentException("end");
            }
            return b[i] & 0xff;
        }

        private void space() {
            while (i < b.length && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r')) {
                i++;
            }
        }

        private void expect(int c) {
            if (at() != c) {
                throw new IllegalArgumentException("expected " + (char) c);
            }
            i++;
        }

        private void container(int depth) {
            boolean object = at() == '{';
            i++;
            space();
            if (at() == (object ? '}' : ']')) {
                i++;
                return;
            }
            while (true) {
                if (object) {
                    string(StoredObjectCheck.MAX_NAME);
                    space();
                    expect(':');
                    space();
                }
                value(depth);
                space();
                int c = at();
                i++;
                if (c == (object ? '}' : ']')) {
                    return;
                }
                if (c != ',') {
                    throw new IllegalArgumentException("between members");
                }
                space();
            }
        }

        private void value(int depth) {
            int c = at();
            if (c == '{' || c == '[') {
                if (depth + 1 > StoredObjectCheck.MAX_DEPTH) {
                    throw new IllegalArgumentException("too deep");
                }
                container(depth + 1);
            } else if (c == '"') {
                string(Integer.MAX_VALUE);
            } else if (c == '-' || (c >= '0' && c <= '9')) {
                number();
            } else {
                for (String word : List.of("true", "false", "null")) {
                    if (b.length - i >= word.length()
                            && new String(b, i, word.length(), StandardCharsets.ISO_8859_1).equals(word)) {
                        i += word.length();
                        return;
                    }
                }
                throw new IllegalArgumentException("no value");
            }
        }

        private void string(int maxBytes) {
            expect('"');
            int start = i;
            while (true) {
                int c = at();
                if (c == '"') {
                    if (i - start > maxBytes) {
                        throw new IllegalArgumentException("name too long");
                    }
                    i++;
                    return;
                }
                if (c < 0x20) {
                    throw new IllegalArgumentException("control");
                }
                if (c == '\\') {
                    i++;
                    int e = at();
                    if (e == 'u') {
                        for (int k = 1; k <= 4; k++) {
                            i++;
                            int h = at();
                            if (!((h >= '0' && h <= '9') || (h >= 'a' && h <= 'f') || (h >= 'A' && h <= 'F'))) {
                                throw new IllegalArgumentException("hex");
                            }
                        }
                    } else if ("\"\\/bfnrt".indexOf(e) < 0) {
                        throw new IllegalArgumentException("escape");
                    }
                    i++;
                } else if (c >= 0x80) {
                    ascii = false;
                    int length = sequence(i);
                    if (length == 0) {
                        utf8 = false;
                        i++;
                    } else {
                        i += length;
                    }
                } else {
                    i++;
                }
            }
        }

        /** The length of the well-formed UTF-8 sequence at {@code k}, or 0: decoded, then its code point's range. */
        private int sequence(int k) {
            int lead = b[k] & 0xff;
            int length = lead >= 0xf8 ? 0 : lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 0;
            if (length == 0 || k + length > b.length) {
                return 0;
            }
            int cp = lead & (0xff >> (length + 1));
            for (int m = 1; m < length; m++) {
                int c = b[k + m] & 0xff;
                if ((c & 0xc0) != 0x80) {
                    return 0;
                }
                cp = (cp << 6) | (c & 0x3f);
            }
            int min = length == 2 ? 0x80 : length == 3 ? 0x800 : 0x10000;
            boolean ok = cp >= min && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff);
            return ok ? length : 0;
        }

        private void number() {
            int start = i;
            if (at() == '-') {
                i++;
            }
            if (at() == '0') {
                i++;
            } else if (at() >= '1' && at() <= '9') {
                digits();
            } else {
                throw new IllegalArgumentException("number");
            }
            if (i < b.length && b[i] == '.') {
                i++;
                if (digits() == 0) {
                    throw new IllegalArgumentException("fraction");
                }
            }
            if (i < b.length && (b[i] == 'e' || b[i] == 'E')) {
                i++;
                if (i < b.length && (b[i] == '+' || b[i] == '-')) {
                    i++;
                }
                if (digits() == 0) {
                    throw new IllegalArgumentException("exponent");
                }
            }
            if (i - start > StoredObjectCheck.MAX_NUMBER) {
                throw new IllegalArgumentException("number too long");
            }
        }

        private int digits() {
            int start = i;
            while (i < b.length && b[i] >= '0' && b[i] <= '9') {
                i++;
            }
            return i - start;
        }
    }
}
