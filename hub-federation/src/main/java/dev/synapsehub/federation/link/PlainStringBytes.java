package dev.synapsehub.federation.link;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * Runs of bytes that stand for themselves inside a JSON string (not a control, quote, backslash or
 * a byte at or above 0x80), passed eight at a time: most of a page's strings are such bytes.
 */
public final class PlainStringBytes {
    private static final VarHandle WORDS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final long ONES = 0x0101_0101_0101_0101L;
    private static final long HIGHS = 0x8080_8080_8080_8080L;

    private PlainStringBytes() {
    }

    /**
     * The index of the first byte at or after {@code from} that is not plain, if it is among the
     * whole words of eight bytes before {@code end}; else the index after the last such word, from
     * which the caller goes on byte by byte. Every byte skipped is plain.
     */
    public static int skip(byte[] b, int from, int end) {
        int i = from;
        while (i + 8 <= end) {
            long special = notPlain((long) WORDS.get(b, i));
            if (special != 0) {
                return i + (Long.numberOfTrailingZeros(special) >>> 3);
            }
            i += 8;
        }
        return i;
    }

    /**
     * The high bit of each byte of {@code w} that is not plain, and maybe of bytes after the first
     * such byte (a borrow runs upwards), never before it: the lowest bit set marks exactly the first
     * byte that is not plain (little-endian), 0 if none is.
     */
    static long notPlain(long w) {
        long quote = w ^ 0x2222_2222_2222_2222L;
        long backslash = w ^ 0x5c5c_5c5c_5c5c_5c5cL;
        long special = ((quote - ONES) & ~quote) | ((backslash - ONES) & ~backslash)
                | ((w - 0x2020_2020_2020_2020L) & ~w) | w;
        return special & HIGHS;
    }
}
