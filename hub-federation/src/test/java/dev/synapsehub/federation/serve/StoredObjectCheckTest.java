package dev.synapsehub.federation.serve;

import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The eight-bytes-at-once string test of {@link StoredObjectCheck} passes a word exactly when each
 * of its bytes stands for itself inside a JSON string (not a control, quote, backslash or a byte at
 * or above 0x80): every byte value at every position among plain bytes, and random words.
 */
class StoredObjectCheckTest {

    private static boolean plain(int c) {
        return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
    }

    private static long word(int[] bytes) {
        long w = 0;
        for (int k = 7; k >= 0; k--) {
            w = (w << 8) | (bytes[k] & 0xff); // little-endian: bytes[0] is the first in the payload
        }
        return w;
    }

    @Test
    void everyByteAtEveryPositionAmongPlainBytes() {
        SplittableRandom r = new SplittableRandom(3L);
        for (int v = 0; v < 256; v++) {
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
                assertThat(StoredObjectCheck.allPlain(word(bytes))).as("byte %02x at %d", v, at).isEqualTo(plain(v));
            }
        }
    }

    @Test
    void randomWords() {
        SplittableRandom r = new SplittableRandom(4L);
        int[] near = {0x00, 0x01, 0x1f, 0x20, 0x21, 0x22, 0x23, 0x5b, 0x5c, 0x5d, 0x7e, 0x7f, 0x80, 0x81, 0xa2, 0xdc, 0xff};
        for (int round = 0; round < 400_000; round++) {
            int[] bytes = new int[8];
            boolean all = true;
            for (int k = 0; k < 8; k++) {
                bytes[k] = r.nextInt(4) == 0 ? near[r.nextInt(near.length)] : r.nextInt(256);
                all &= plain(bytes[k]);
            }
            assertThat(StoredObjectCheck.allPlain(word(bytes))).isEqualTo(all);
        }
    }
}
