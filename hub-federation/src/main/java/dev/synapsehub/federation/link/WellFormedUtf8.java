package dev.synapsehub.federation.link;

/**
 * Checks that bytes are well-formed UTF-8 (Unicode 15, table 3-7: no overlong forms, no
 * surrogates, nothing above U+10FFFF), as RFC 6455 requires of a text frame. A peer link checks
 * each frame here instead of in Netty's validator, which visits every byte through a callback
 * and cost a tenth of a follower's CPU on a large catch-up; an ASCII run is checked 8 bytes at a time.
 */
public final class WellFormedUtf8 {
    private static final long HIGH_BITS = 0x8080808080808080L;
    private static final java.lang.invoke.VarHandle LONGS =
            java.lang.invoke.MethodHandles.byteArrayViewVarHandle(long[].class, java.nio.ByteOrder.LITTLE_ENDIAN);

    private WellFormedUtf8() {
    }

    /** True when {@code b} is well-formed UTF-8. */
    static boolean check(byte[] b) {
        return check(b, b.length);
    }

    /** True when the first {@code n} bytes of {@code b} are well-formed UTF-8. */
    static boolean check(byte[] b, int n) {
        int i = 0;
        while (i < n) {
            if (i + 8 <= n && (ascii8(b, i) & HIGH_BITS) == 0) {
                i += 8;
                continue;
            }
            if (b[i] >= 0) {
                i++;
                continue;
            }
            int length = sequence(b, i, n);
            if (length < 0) {
                return false;
            }
            i += length;
        }
        return true;
    }

    /**
     * The length (2 to 4) of the well-formed multi-byte sequence that starts at {@code b[i]}, a
     * byte above 0x7F, within the first {@code n} bytes; -1 if it is not one (a continuation byte
     * first, an overlong form, a surrogate, above U+10FFFF, or cut short).
     */
    public static int sequence(byte[] b, int i, int n) {
        int c = b[i] & 0xFF;
        int lo = 0x80;
        int hi = 0xBF;
        int more;
        if (c >= 0xC2 && c <= 0xDF) {
            more = 1;
        } else if (c >= 0xE0 && c <= 0xEF) {
            more = 2;
            if (c == 0xE0) {
                lo = 0xA0; // no overlong three-byte form
            } else if (c == 0xED) {
                hi = 0x9F; // no surrogates
            }
        } else if (c >= 0xF0 && c <= 0xF4) {
            more = 3;
            if (c == 0xF0) {
                lo = 0x90; // no overlong four-byte form
            } else if (c == 0xF4) {
                hi = 0x8F; // nothing above U+10FFFF
            }
        } else {
            return -1; // a continuation byte first, C0/C1 (overlong), or F5..FF
        }
        if (i + more >= n) { // truncated
            return -1;
        }
        int second = b[i + 1] & 0xFF;
        if (second < lo || second > hi) {
            return -1;
        }
        for (int k = 2; k <= more; k++) {
            int next = b[i + k] & 0xFF;
            if (next < 0x80 || next > 0xBF) {
                return -1;
            }
        }
        return more + 1;
    }

    private static long ascii8(byte[] b, int i) {
        return (long) LONGS.get(b, i);
    }
}
