package dev.synapsehub.federation.link;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/** The peer link's UTF-8 check agrees with the JDK's strict decoder (RFC 6455 §8.1: a text frame is UTF-8). */
class WellFormedUtf8Test {
    private static boolean jdk(byte[] b, int n) {
        try {
            StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(b, 0, n));
            return true;
        } catch (CharacterCodingException e) {
            return false;
        }
    }

    @Test
    void knownFormsAreAcceptedOrRefusedAsTheStandardSays() {
        assertThat(WellFormedUtf8.check("{\"a\":\"plain ascii, long enough for the 8-byte path\"}".getBytes(StandardCharsets.UTF_8))).isTrue();
        assertThat(WellFormedUtf8.check("é€𝄞 mixed with ascii text".getBytes(StandardCharsets.UTF_8))).isTrue();
        byte[][] bad = {
            {(byte) 0xC0, (byte) 0x80},                         // overlong NUL
            {(byte) 0xE0, (byte) 0x80, (byte) 0x80},            // overlong three-byte form
            {(byte) 0xED, (byte) 0xA0, (byte) 0x80},            // a surrogate
            {(byte) 0xF4, (byte) 0x90, (byte) 0x80, (byte) 0x80}, // above U+10FFFF
            {(byte) 0xF5, (byte) 0x80, (byte) 0x80, (byte) 0x80},
            {(byte) 0x80},                                      // a continuation byte first
            {'a', 'b', (byte) 0xE2, (byte) 0x82},               // truncated at the end
            {(byte) 0xC3, 'a'},                                 // a missing continuation
            {(byte) 0xFF},
        };
        for (byte[] b : bad) {
            assertThat(WellFormedUtf8.check(b)).as(java.util.Arrays.toString(b)).isFalse();
            byte[] inside = new byte[16 + b.length + 9]; // the same inside ASCII runs (the 8-byte path)
            java.util.Arrays.fill(inside, (byte) 'x');
            System.arraycopy(b, 0, inside, 16, b.length);
            assertThat(WellFormedUtf8.check(inside)).as("inside ascii: " + java.util.Arrays.toString(b)).isFalse();
        }
        // only the first n bytes count
        byte[] tail = {'o', 'k', (byte) 0xFF};
        assertThat(WellFormedUtf8.check(tail, 2)).isTrue();
        assertThat(WellFormedUtf8.check(tail, 3)).isFalse();
    }

    @Test
    void randomBytesAreJudgedAsTheJdkDecoderJudgesThem() {
        Random random = new Random(12);
        int disagreements = 0;
        int wellFormed = 0;
        for (int i = 0; i < 200_000; i++) {
            // random code points (any plane, surrogates included), encoded, then perhaps one byte changed
            StringBuilder text = new StringBuilder();
            for (int k = random.nextInt(12); k > 0; k--) {
                int cp = random.nextInt(4) == 0 ? random.nextInt(128) : random.nextInt(0x110000);
                if (cp < 0xD800 || cp > 0xDFFF) {
                    text.appendCodePoint(cp);
                }
            }
            byte[] b = text.toString().getBytes(StandardCharsets.UTF_8);
            if (b.length > 0 && random.nextBoolean()) {
                b[random.nextInt(b.length)] = (byte) random.nextInt(256);
            }
            int n = b.length;
            boolean expected = jdk(b, n);
            wellFormed += expected ? 1 : 0;
            if (WellFormedUtf8.check(b) != expected) {
                disagreements++;
            }
        }
        assertThat(disagreements).isZero();
        assertThat(wellFormed).as("the sample holds well-formed input too").isGreaterThan(1000);
    }
}
