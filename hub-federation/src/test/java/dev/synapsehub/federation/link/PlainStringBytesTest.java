package dev.synapsehub.federation.link;

import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link PlainStringBytes#skip} stops exactly where a byte-by-byte reading of whole words does: at
 * the first byte that is not plain (control, quote, backslash, at or above 0x80) among the whole
 * words before the end, else after the last whole word; every byte value at every position, and
 * random runs with such bytes here and there.
 */
class PlainStringBytesTest {
    private static final int[] NEAR = {0x00, 0x01, 0x1f, 0x20, 0x21, 0x22, 0x23, 0x5b, 0x5c, 0x5d, 0x7e, 0x7f, 0x80,
        0x81, 0xa2, 0xc3, 0xdc, 0xff};

    private static boolean plain(int c) {
        return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
    }

    /** Byte by byte: the first byte that is not plain within the whole words from {@code from}. */
    private static int expected(byte[] b, int from, int end) {
        int words = (end - from) / 8;
        for (int k = from; k < from + 8 * words; k++) {
            if (!plain(b[k] & 0xff)) {
                return k;
            }
        }
        return from + 8 * words;
    }

    @Test
    void everyByteValueAtEveryPosition() {
        SplittableRandom r = new SplittableRandom(8L);
        for (int v = 0; v < 256; v++) {
            for (int at = 0; at < 24; at++) {
                byte[] b = new byte[24];
                for (int k = 0; k < b.length; k++) {
                    b[k] = (byte) (0x20 + r.nextInt(0x5f));
                    if (!plain(b[k] & 0xff)) {
                        b[k] = 'a';
                    }
                }
                b[at] = (byte) v;
                for (int from = 0; from <= 3; from++) {
                    for (int end = 17; end <= 24; end++) {
                        assertThat(PlainStringBytes.skip(b, from, end)).as("byte %02x at %d, [%d, %d)", v, at, from, end)
                                .isEqualTo(expected(b, from, end));
                    }
                }
            }
        }
    }

    @Test
    void randomRuns() {
        SplittableRandom r = new SplittableRandom(9L);
        for (int round = 0; round < 200_000; round++) {
            byte[] b = new byte[r.nextInt(48)];
            int odds = 1 + r.nextInt(40);
            for (int k = 0; k < b.length; k++) {
                b[k] = (byte) (r.nextInt(odds) == 0 ? NEAR[r.nextInt(NEAR.length)] : 'a' + r.nextInt(26));
            }
            int from = b.length == 0 ? 0 : r.nextInt(b.length);
            int end = from + r.nextInt(b.length - from + 1);
            assertThat(PlainStringBytes.skip(b, from, end)).isEqualTo(expected(b, from, end));
        }
    }
}
