package dev.synapsehub.federation.link;

import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link PlainStringBytes#skip} stops exactly where a byte-by-byte reading of whole words does: at
 * the first byte that is not plain (control, quote, backslash, at or above 0x80) among the whole
 * words before the end, else after the last whole word; every byte value at every position, and
 * random runs with such bytes here and there. Its word test, {@link PlainStringBytes#notPlain},
 * marks exactly the first byte that is not plain (none when all eight are), over every byte value
 * at every position among plain bytes and random words (the federation's stored-payload check
 * and the follower's page reader both pass strings with it).
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

    private static final int[] SPECIAL = {'"', '\\', 0x00, 0x01, 0x1f, 0x20, 0x7f, 0x80, 0xbf, 0xc2, 0xc3, 0xe0, 0xe2,
        0xed, 0xf0, 0xf4, 0xf5, 0xff, '{', '}', '[', ']', ':', ',', '0', '1', '-', '+', 'e', '.', 'u', 'a', 'n', 't',
        '/', ' ', '\n', '\r', '\t'};

    private static long word(int[] bytes) {
        long w = 0;
        for (int k = 7; k >= 0; k--) {
            w = (w << 8) | (bytes[k] & 0xff); // little-endian: bytes[0] is the first in the payload
        }
        return w;
    }

    @Test
    void notPlainMarksExactlyTheFirstByteThatIsNotPlain() {
        SplittableRandom r = new SplittableRandom(7L);
        for (int round = 0; round < 300_000; round++) {
            int[] bytes = new int[8];
            for (int k = 0; k < 8; k++) {
                bytes[k] = r.nextInt(3) == 0 ? SPECIAL[r.nextInt(SPECIAL.length)] : r.nextInt(256);
            }
            if (round < 256 * 8) { // every byte value at every position among plain bytes
                for (int k = 0; k < 8; k++) {
                    bytes[k] = 'a' + r.nextInt(26);
                }
                bytes[round % 8] = round / 8;
            }
            int first = 8;
            for (int k = 7; k >= 0; k--) {
                if (!plain(bytes[k])) {
                    first = k;
                }
            }
            long w = word(bytes);
            long special = PlainStringBytes.notPlain(w);
            assertThat(special == 0 ? 8 : Long.numberOfTrailingZeros(special) >>> 3).as("word %016x", w).isEqualTo(first);
        }
    }

    @Test
    void aWordPassesExactlyWhenEveryByteIsPlain() {
        SplittableRandom r = new SplittableRandom(3L);
        for (int v = 0; v < 256; v++) { // every byte value at every position among random plain bytes
            for (int at = 0; at < 8; at++) {
                int[] bytes = new int[8];
                for (int k = 0; k < 8; k++) {
                    int c;
                    do {
                        c = r.nextInt(256);
                    } while (!plain(c));
                    bytes[k] = c;
                }
                bytes[at] = v;
                assertThat(PlainStringBytes.notPlain(word(bytes)) == 0).as("byte %02x at %d", v, at).isEqualTo(plain(v));
            }
        }
        SplittableRandom words = new SplittableRandom(4L);
        for (int round = 0; round < 400_000; round++) { // random words, bytes near the edges often
            int[] bytes = new int[8];
            boolean all = true;
            for (int k = 0; k < 8; k++) {
                bytes[k] = words.nextInt(4) == 0 ? NEAR[words.nextInt(NEAR.length)] : words.nextInt(256);
                all &= plain(bytes[k]);
            }
            assertThat(PlainStringBytes.notPlain(word(bytes)) == 0).isEqualTo(all);
        }
    }
}
