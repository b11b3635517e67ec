package dev.synapsehub.journal;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The primitives of the snapshot body: fixed-width big-endian numbers, unsigned varints, and
 * strings as a char count then each UTF-16 unit in one to three bytes (the encoding of Java's
 * modified UTF-8, except that NUL is written as one 0 byte), so every Java string, lone
 * surrogates included, round-trips exactly. A reader takes NUL as one 0 byte or as the two
 * bytes {@code C0 80} of modified UTF-8, which hubs wrote before; as one byte, an idempotency
 * key (agent, verb and key joined by NULs) reads as the ASCII it otherwise is.
 * Reading checks every bound and throws {@link CorruptSnapshotException}, never an unchecked
 * exception, on a body that does not hold what it claims.
 */
final class SnapshotBytes {
    private SnapshotBytes() {
    }

    /** A growable output buffer. */
    static final class Out {
        private byte[] buf = new byte[1 << 16];
        private int size;

        private void ensure(int more) {
            if (size + more > buf.length) {
                long want = Math.max((long) buf.length * 2, (long) size + more);
                if (want > Integer.MAX_VALUE - 16) {
                    throw new IllegalStateException("snapshot body over 2 GiB");
                }
                buf = Arrays.copyOf(buf, (int) want);
            }
        }

        void bytes(byte[] b) {
            ensure(b.length);
            System.arraycopy(b, 0, buf, size, b.length);
            size += b.length;
        }

        void i64(long v) {
            ensure(8);
            for (int shift = 56; shift >= 0; shift -= 8) {
                buf[size++] = (byte) (v >>> shift);
            }
        }

        void f64(double v) {
            i64(Double.doubleToRawLongBits(v));
        }

        void varint(long v) {
            ensure(10);
            while ((v & ~0x7FL) != 0) {
                buf[size++] = (byte) ((v & 0x7F) | 0x80);
                v >>>= 7;
            }
            buf[size++] = (byte) v;
        }

        void bool(boolean v) {
            ensure(1);
            buf[size++] = (byte) (v ? 1 : 0);
        }

        /** A string or null (count 0 is null, else chars + 1). */
        void str(String s) {
            if (s == null) {
                varint(0);
                return;
            }
            int n = s.length();
            varint(n + 1L);
            ensure(3 * n);
            int i = 0;
            for (; i < n; i++) { // the common case, ASCII, one byte per char
                char c = s.charAt(i);
                if (c >= 0x80) {
                    break;
                }
                buf[size++] = (byte) c;
            }
            for (; i < n; i++) {
                char c = s.charAt(i);
                if (c < 0x80) {
                    buf[size++] = (byte) c;
                } else if (c < 0x800) {
                    buf[size++] = (byte) (0xC0 | (c >> 6));
                    buf[size++] = (byte) (0x80 | (c & 0x3F));
                } else {
                    buf[size++] = (byte) (0xE0 | (c >> 12));
                    buf[size++] = (byte) (0x80 | ((c >> 6) & 0x3F));
                    buf[size++] = (byte) (0x80 | (c & 0x3F));
                }
            }
        }

        /** Appends what {@code other} holds from byte {@code from} to byte {@code to}. */
        void bytes(Out other, int from, int to) {
            ensure(to - from);
            System.arraycopy(other.buf, from, buf, size, to - from);
            size += to - from;
        }

        /** Bytes written so far. */
        int size() {
            return size;
        }

        byte[] toByteArray() {
            return Arrays.copyOf(buf, size);
        }
    }

    /** A bounds-checked reader over a body, or over one section of it. */
    static final class In {
        private final byte[] buf;
        private final int end;
        private int pos;

        In(byte[] buf) {
            this(buf, 0, buf.length);
        }

        /** A reader of bytes {@code from} (inclusive) to {@code to} (exclusive) of {@code buf} only. */
        In(byte[] buf, int from, int to) {
            if (from < 0 || to < from || to > buf.length) {
                throw new IllegalArgumentException("range " + from + ".." + to + " of " + buf.length);
            }
            this.buf = buf;
            this.pos = from;
            this.end = to;
        }

        private void need(int n) throws CorruptSnapshotException {
            if (n < 0 || pos + n > end || pos + n < 0) {
                throw new CorruptSnapshotException("the body ends early (at byte " + pos + " of " + end + ")");
            }
        }

        /** The offset of the next byte in the whole buffer. */
        int position() {
            return pos;
        }

        byte[] bytes(int n) throws CorruptSnapshotException {
            need(n);
            byte[] out = Arrays.copyOfRange(buf, pos, pos + n);
            pos += n;
            return out;
        }

        long i64() throws CorruptSnapshotException {
            need(8);
            long v = 0;
            for (int i = 0; i < 8; i++) {
                v = (v << 8) | (buf[pos++] & 0xFF);
            }
            return v;
        }

        double f64() throws CorruptSnapshotException {
            return Double.longBitsToDouble(i64());
        }

        /** A finite double (clocks, times): a NaN or infinity is corruption. */
        double finite(String what) throws CorruptSnapshotException {
            double d = f64();
            if (!Double.isFinite(d)) {
                throw new CorruptSnapshotException(what + " is not finite");
            }
            return d;
        }

        long varint() throws CorruptSnapshotException {
            long v = 0;
            for (int shift = 0; shift < 64; shift += 7) {
                need(1);
                byte b = buf[pos++];
                v |= (long) (b & 0x7F) << shift;
                if ((b & 0x80) == 0) {
                    return v;
                }
            }
            throw new CorruptSnapshotException("a varint runs over 64 bits at byte " + pos);
        }

        /** A count of items, each taking at least one byte: bounded by what is left. */
        int count(String what) throws CorruptSnapshotException {
            long n = varint();
            if (n < 0 || n > end - pos) {
                throw new CorruptSnapshotException(what + " count " + n + " exceeds the body");
            }
            return (int) n;
        }

        boolean bool() throws CorruptSnapshotException {
            need(1);
            byte b = buf[pos++];
            if (b != 0 && b != 1) {
                throw new CorruptSnapshotException("a boolean byte is " + b);
            }
            return b == 1;
        }

        String str() throws CorruptSnapshotException {
            long header = varint();
            if (header == 0) {
                return null;
            }
            long n = header - 1;
            if (n > end - pos) {
                throw new CorruptSnapshotException("a string of " + n + " chars exceeds the body");
            }
            int len = (int) n;
            // ASCII, the common case, through the JDK's UTF-8 decoder: its all-ASCII check is
            // intrinsic (vectorised), a byte-by-byte loop here was a start's largest decode cost.
            // Any byte over 0x7F among the len bytes makes that decode shorter than len chars (a
            // multi-byte sequence) or puts U+FFFD in it (a malformed one): then it is not taken.
            String fast = new String(buf, pos, len, StandardCharsets.UTF_8);
            if (fast.length() == len && fast.indexOf('\uFFFD') < 0) {
                pos += len;
                return fast;
            }
            char[] chars = new char[len];
            for (int i = 0; i < n; i++) {
                need(1);
                int b = buf[pos++] & 0xFF;
                if (b < 0x80) {
                    chars[i] = (char) b;
                } else if ((b & 0xE0) == 0xC0) {
                    chars[i] = (char) (((b & 0x1F) << 6) | continuation());
                } else if ((b & 0xF0) == 0xE0) {
                    int mid = continuation();
                    chars[i] = (char) (((b & 0x0F) << 12) | (mid << 6) | continuation());
                } else {
                    throw new CorruptSnapshotException("bad string byte 0x" + Integer.toHexString(b));
                }
            }
            return new String(chars);
        }

        /** True when the next {@code n} bytes are each a one-byte char (ASCII, NUL included). */
        private boolean ascii(int n) {
            if (n > end - pos) {
                return false;
            }
            for (int i = pos, end = pos + n; i < end; i++) {
                if (buf[i] < 0) {
                    return false;
                }
            }
            return true;
        }

        /**
         * Short ASCII strings this reader returned from {@link #shared}, by a hash of their bytes:
         * null until first used. Claims repeat their owners, principals, statuses and worktrees
         * (100,000 live claims of a few hundred agents), so they decode to one String each
         * instead of one per claim: fewer objects to allocate and collect during a start, and
         * the hash codes the registries' maps need are computed once.
         */
        private String[] sharedStrings;
        private static final int SHARED_SLOTS = 1024;
        private static final int SHARED_MAX_LENGTH = 64;

        /**
         * Like {@link #text}, but a short ASCII string equal to one returned here before (in the
         * same slot) is returned as that same instance. Same bytes, same checks, same result.
         */
        String shared(String what) throws CorruptSnapshotException {
            int start = pos;
            long header = varint();
            long n = header - 1;
            if (header == 0 || n < 0 || n > SHARED_MAX_LENGTH || n > end - pos || !ascii((int) n)) {
                pos = start;
                return text(what);
            }
            int len = (int) n;
            int h = 0;
            for (int i = pos, stop = pos + len; i < stop; i++) {
                h = 31 * h + buf[i];
            }
            if (sharedStrings == null) {
                sharedStrings = new String[SHARED_SLOTS];
            }
            int slot = (h ^ (h >>> 16)) & (SHARED_SLOTS - 1);
            String seen = sharedStrings[slot];
            if (seen == null || !sameAscii(seen, len)) {
                seen = new String(buf, pos, len, StandardCharsets.ISO_8859_1);
                sharedStrings[slot] = seen;
            }
            pos += len;
            return seen;
        }

        /** Whether the next {@code len} bytes (ASCII) spell {@code s}. */
        private boolean sameAscii(String s, int len) {
            if (s.length() != len) {
                return false;
            }
            for (int i = 0; i < len; i++) {
                if (s.charAt(i) != buf[pos + i]) {
                    return false;
                }
            }
            return true;
        }

        /** A string that must be present. */
        String text(String what) throws CorruptSnapshotException {
            String s = str();
            if (s == null) {
                throw new CorruptSnapshotException(what + " is missing");
            }
            return s;
        }

        private int continuation() throws CorruptSnapshotException {
            need(1);
            int b = buf[pos++] & 0xFF;
            if ((b & 0xC0) != 0x80) {
                throw new CorruptSnapshotException("bad string continuation byte 0x" + Integer.toHexString(b));
            }
            return b & 0x3F;
        }

        boolean atEnd() {
            return pos == end;
        }
    }
}
