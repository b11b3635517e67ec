package dev.synapsehub.federation.serve;

import dev.synapsehub.federation.link.PlainStringBytes;

/**
 * Whether a stored payload's bytes are one well-formed JSON object (RFC 8259, nothing around it),
 * and whether they are all ASCII, checked before they are copied into a page as they are: a
 * damaged row copied raw would make the whole page unparseable for every follower. One pass over
 * the bytes, no parser.
 *
 * <p>Stricter than a follower's Jackson reader where Jackson has limits of its own (nesting, number
 * and member name lengths), so whatever passes here is read there too. Bytes at or above 0x80 are
 * accepted inside strings only (and make the object {@link Shape#OBJECT} rather than
 * {@link Shape#ASCII_OBJECT}), and are checked for well-formed UTF-8 there (as the JDK's decoder
 * defines it: no overlong forms, no surrogates, nothing past U+10FFFF): a well-formed object is
 * {@link Shape#UTF8_OBJECT} and can be copied as it is, since decoding and encoding it again gives
 * the same bytes.
 */
final class StoredObjectCheck {
    /** Deepest nesting accepted (a follower's Jackson refuses beyond 1,000, the page adds 3). */
    static final int MAX_DEPTH = 500;
    /** Longest number token accepted (Jackson refuses numbers of more than 1,000 digits). */
    static final int MAX_NUMBER = 1000;
    /** Longest member name accepted, in bytes as stored (Jackson refuses names over 50,000 chars). */
    static final int MAX_NAME = 50_000;

    /** What a payload's bytes are. */
    enum Shape {
        /** Not one well-formed JSON object. */
        NOT_OBJECT,
        /** One JSON object with bytes at or above 0x80 in its strings, not all well-formed UTF-8. */
        OBJECT,
        /** One JSON object with well-formed multi-byte UTF-8 in its strings. */
        UTF8_OBJECT,
        /** One JSON object, all ASCII. */
        ASCII_OBJECT
    }

    /** ASCII bytes that stand for themselves inside a string: not a control, quote or backslash. */
    private static final boolean[] PLAIN = new boolean[256];

    static {
        for (int c = 0x20; c < 0x80; c++) {
            PLAIN[c] = c != '"' && c != '\\';
        }
    }

    private static final int KEY = 0;
    private static final int VALUE = 1;
    private static final int AFTER_VALUE = 2;
    private static final int OBJECT_FIRST = 3;
    private static final int ARRAY_FIRST = 4;

    private StoredObjectCheck() {
    }

    /** What {@code b} is. */
    static Shape shape(byte[] b) {
        int n = b.length;
        if (n < 2 || b[0] != '{' || b[n - 1] != '}') { // nothing around it, not even white space
            return Shape.NOT_OBJECT;
        }
        Scan scan = new Scan();
        int depth = 1;
        scan.set(1, true);
        int state = OBJECT_FIRST;
        int i = 1;
        while (true) {
            i = space(b, i);
            if (i >= n) {
                if (state != AFTER_VALUE || depth != 0) {
                    return Shape.NOT_OBJECT;
                }
                return scan.ascii ? Shape.ASCII_OBJECT : scan.utf8 ? Shape.UTF8_OBJECT : Shape.OBJECT;
            }
            byte c = b[i];
            switch (state) {
                case OBJECT_FIRST, ARRAY_FIRST -> {
                    if (c == (state == OBJECT_FIRST ? '}' : ']')) {
                        depth--;
                        i++;
                        state = AFTER_VALUE;
                    } else {
                        state = state == OBJECT_FIRST ? KEY : VALUE;
                    }
                }
                case KEY -> {
                    if (c != '"') {
                        return Shape.NOT_OBJECT;
                    }
                    i = scan.string(b, i, MAX_NAME);
                    i = i > 0 ? space(b, i) : i;
                    if (i <= 0 || i >= n || b[i] != ':') {
                        return Shape.NOT_OBJECT;
                    }
                    i++;
                    state = VALUE;
                }
                case VALUE -> {
                    if (c == '{' || c == '[') {
                        if (depth == MAX_DEPTH) {
                            return Shape.NOT_OBJECT;
                        }
                        scan.set(++depth, c == '{');
                        i++;
                        state = c == '{' ? OBJECT_FIRST : ARRAY_FIRST;
                        continue;
                    }
                    if (c == '"') {
                        i = scan.string(b, i, Integer.MAX_VALUE);
                    } else if (c == '-' || (c >= '0' && c <= '9')) {
                        i = number(b, i);
                    } else if (c == 't') {
                        i = literal(b, i, "true");
                    } else if (c == 'f') {
                        i = literal(b, i, "false");
                    } else if (c == 'n') {
                        i = literal(b, i, "null");
                    } else {
                        return Shape.NOT_OBJECT;
                    }
                    if (i < 0) {
                        return Shape.NOT_OBJECT;
                    }
                    state = AFTER_VALUE;
                }
                default -> { // AFTER_VALUE
                    if (depth == 0) {
                        return Shape.NOT_OBJECT; // something after the object
                    }
                    if (c == ',') {
                        i++;
                        state = scan.isObject(depth) ? KEY : VALUE;
                    } else if (c == (scan.isObject(depth) ? '}' : ']')) {
                        depth--;
                        i++;
                    } else {
                        return Shape.NOT_OBJECT;
                    }
                }
            }
        }
    }

    /**
     * Per open container, object or array (bits for the usual shallow payload, an array only
     * deeper), and whether every string so far was ASCII.
     */
    private static final class Scan {
        private long shallow;
        private boolean[] deep;
        private boolean ascii = true;
        private boolean utf8 = true;

        void set(int depth, boolean object) {
            if (depth < 64) {
                shallow = object ? shallow | (1L << depth) : shallow & ~(1L << depth);
                return;
            }
            if (deep == null) {
                deep = new boolean[MAX_DEPTH + 1];
            }
            deep[depth] = object;
        }

        boolean isObject(int depth) {
            return depth < 64 ? (shallow & (1L << depth)) != 0 : deep[depth];
        }

        /**
         * The index after the string starting at {@code b[i]} (a quote), or -1. Kept small so that
         * the JIT inlines it into {@link #shape} (the whole scan was over its inlining limit, a call
         * per string): a string of plain bytes, the usual, ends where the word skip stops; anything
         * else (an escape, a byte at or above 0x80, the last bytes of the payload) goes on in
         * {@link #rest} from the first byte that is not plain.
         */
        int string(byte[] b, int i, int maxBytes) {
            int start = ++i;
            i = PlainStringBytes.skip(b, i, b.length); // the plain bytes, 8 a step
            if (i < b.length && b[i] == '"') {
                return i - start > maxBytes ? -1 : i + 1;
            }
            return rest(b, i, start, maxBytes);
        }

        /** The index after the string begun at {@code start} (plain bytes up to {@code i}), or -1. */
        private int rest(byte[] b, int i, int start, int maxBytes) {
            int n = b.length;
            while (i < n) {
                i = PlainStringBytes.skip(b, i, n); // the bulk of a string, 8 bytes a step
                while (i < n && PLAIN[b[i] & 0xff]) { // the rest, one table look-up per byte
                    i++;
                }
                if (i >= n) {
                    return -1;
                }
                int c = b[i] & 0xff;
                if (c == '"') {
                    return i - start > maxBytes ? -1 : i + 1;
                }
                if (c < 0x20) {
                    return -1;
                }
                if (c >= 0x80) {
                    ascii = false;
                    int length = utf8Sequence(b, i, c);
                    if (length == 0) {
                        utf8 = false; // the byte stays a string byte, as before; the row goes through its text
                    } else {
                        i += length - 1; // continuation bytes are neither quote, backslash nor control
                    }
                }
                if (c == '\\') {
                    if (++i >= n) {
                        return -1;
                    }
                    switch (b[i]) {
                        case '"', '\\', '/', 'b', 'f', 'n', 'r', 't' -> { }
                        case 'u' -> {
                            if (i + 4 >= n) {
                                return -1;
                            }
                            for (int k = 1; k <= 4; k++) {
                                if (Character.digit(b[i + k], 16) < 0) {
                                    return -1;
                                }
                            }
                            i += 4;
                        }
                        default -> {
                            return -1;
                        }
                    }
                }
                i++;
            }
            return -1;
        }
    }

    /**
     * The length of the well-formed UTF-8 sequence starting at {@code b[i]} (lead byte {@code c}),
     * or 0 (Unicode's table 3-7, which the JDK's UTF-8 decoder follows).
     */
    private static int utf8Sequence(byte[] b, int i, int c) {
        int n = b.length;
        if (c >= 0xc2 && c <= 0xdf) {
            return i + 1 < n && continuation(b[i + 1], 0x80, 0xbf) ? 2 : 0;
        }
        if (c >= 0xe0 && c <= 0xef) {
            int low = c == 0xe0 ? 0xa0 : 0x80;
            int high = c == 0xed ? 0x9f : 0xbf;
            return i + 2 < n && continuation(b[i + 1], low, high) && continuation(b[i + 2], 0x80, 0xbf) ? 3 : 0;
        }
        if (c >= 0xf0 && c <= 0xf4) {
            int low = c == 0xf0 ? 0x90 : 0x80;
            int high = c == 0xf4 ? 0x8f : 0xbf;
            return i + 3 < n && continuation(b[i + 1], low, high) && continuation(b[i + 2], 0x80, 0xbf)
                    && continuation(b[i + 3], 0x80, 0xbf) ? 4 : 0;
        }
        return 0;
    }

    private static boolean continuation(byte b, int low, int high) {
        int v = b & 0xff;
        return v >= low && v <= high;
    }

    /** The first index at or after {@code i} whose byte is not JSON white space (one compare for most bytes). */
    private static int space(byte[] b, int i) {
        while (i < b.length) {
            byte c = b[i];
            if (c > ' ' || (c != ' ' && c != '\n' && c != '\r' && c != '\t')) {
                return i;
            }
            i++;
        }
        return i;
    }

    /** The index after the number starting at {@code b[i]}, or -1. */
    private static int number(byte[] b, int i) {
        int n = b.length;
        int start = i;
        if (b[i] == '-') {
            i++;
        }
        if (i >= n) {
            return -1;
        }
        if (b[i] == '0') {
            i++;
        } else if (b[i] >= '1' && b[i] <= '9') {
            i = digits(b, i);
        } else {
            return -1;
        }
        if (i < n && b[i] == '.') {
            int d = digits(b, i + 1);
            if (d == i + 1) {
                return -1;
            }
            i = d;
        }
        if (i < n && (b[i] == 'e' || b[i] == 'E')) {
            i++;
            if (i < n && (b[i] == '+' || b[i] == '-')) {
                i++;
            }
            int d = digits(b, i);
            if (d == i) {
                return -1;
            }
            i = d;
        }
        return i - start > MAX_NUMBER ? -1 : i;
    }

    private static int digits(byte[] b, int i) {
        while (i < b.length && b[i] >= '0' && b[i] <= '9') {
            i++;
        }
        return i;
    }

    private static int literal(byte[] b, int i, String word) {
        if (i + word.length() > b.length) {
            return -1;
        }
        for (int k = 0; k < word.length(); k++) {
            if (b[i + k] != word.charAt(k)) {
                return -1;
            }
        }
        return i + word.length();
    }
}
