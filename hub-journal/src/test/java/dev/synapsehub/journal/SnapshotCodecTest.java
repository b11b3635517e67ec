package dev.synapsehub.journal;

import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.MutationDecider;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.state.CoordinationState;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The snapshot body round-trips every field exactly and refuses damage with a typed error only. */
class SnapshotCodecTest {

    /** A state after a random history decided and applied directly, as the actor would. */
    static CoordinationState randomState(long seed, int steps) {
        CoordinationState state = SnapshotEquivalenceTest.smallState();
        RandomHistory history = new RandomHistory(seed);
        double now = 1_700_000_000;
        for (int i = 0; i < steps; i++) {
            Mutation m = history.next();
            if (MutationDecider.decide(state, m, now) instanceof MutationDecider.Fresh fresh) {
                for (CoordinationEvent e : fresh.events()) {
                    state.apply(e);
                }
            }
            now += history.advance();
        }
        return state;
    }

    @Test
    void aBodyRoundTripsTheImageExactlyIncludingUnicodeNullsAndLoneSurrogates() throws Exception {
        CoordinationState state = randomState(5, 3_000);
        StateSnapshot snapshot = new StateSnapshot(1_700_000_123.25, 2, 17, state.image());
        byte[] body = SnapshotCodec.encode(snapshot);
        StateSnapshot back = SnapshotCodec.decode(body);
        assertThat(back).isEqualTo(snapshot);
        assertThat(back.image().messaging().history()).isNotEmpty();
        assertThat(back.image().claims().live()).isNotEmpty();

        SnapshotBytes.Out out = new SnapshotBytes.Out();
        String odd = "a\u0000b\u00e9\u4e2d\uD83D\uDE00 lone \uD800 \uDFFF end";
        out.str(odd);
        out.str(null);
        out.str("");
        SnapshotBytes.In in = new SnapshotBytes.In(out.toByteArray());
        assertThat(in.str()).isEqualTo(odd);
        assertThat(in.str()).isNull();
        assertThat(in.str()).isEmpty();
        assertThat(in.atEnd()).isTrue();
    }

    @Test
    void stringsNearTheAsciiFastPathRoundTripExactly() throws Exception {
        // chars whose bytes the ASCII fast path must not take: NUL (two bytes), 0x80-0xFF (two),
        // U+FFFD itself (three, what a malformed UTF-8 decode would produce), lone surrogates
        char[] alphabet = {'a', 'Z', '0', '/', '\u007f', '\u0000', '\u0080', '\u00e9', '\u00ff', '\u0100', '\u4e2d',
                '\ufffd', '\ud800', '\udfff', '\ud83d', '\ude00'};
        Random rnd = new Random(11);
        List<String> strings = new ArrayList<>();
        for (int i = 0; i < 5_000; i++) {
            char[] chars = new char[rnd.nextInt(40)];
            boolean mostlyAscii = rnd.nextBoolean(); // one odd char in a long ASCII run, or a mix
            for (int c = 0; c < chars.length; c++) {
                chars[c] = mostlyAscii && c != chars.length / 2 ? (char) ('a' + rnd.nextInt(26))
                        : alphabet[rnd.nextInt(alphabet.length)];
            }
            strings.add(new String(chars));
        }
        SnapshotBytes.Out out = new SnapshotBytes.Out();
        strings.forEach(out::str);
        SnapshotBytes.In in = new SnapshotBytes.In(out.toByteArray());
        for (String expected : strings) {
            assertThat(in.str()).isEqualTo(expected);
        }
        assertThat(in.atEnd()).isTrue();
    }

    @Test
    void nulIsWrittenAsOneByteAndReadInEitherForm() throws Exception {
        String key = "fleet/agent-7\u0000claim\u0000boot-42"; // an idempotency key: agent, verb, key
        SnapshotBytes.Out out = new SnapshotBytes.Out();
        out.str(key);
        byte[] written = out.toByteArray();
        assertThat(written).hasSize(1 + key.length()); // the count, then one byte per char
        assertThat(written[1 + key.indexOf('\u0000')]).isZero();
        assertThat(new SnapshotBytes.In(written).str()).isEqualTo(key);
        assertThat(new SnapshotBytes.In(written).shared("key")).isEqualTo(key);

        // as hubs wrote it before: NUL as the two bytes C0 80 of modified UTF-8
        byte[] older = {4, 'a', (byte) 0xC0, (byte) 0x80, 'b'};
        assertThat(new SnapshotBytes.In(older).str()).isEqualTo("a\u0000b");
        assertThat(new SnapshotBytes.In(older).shared("key")).isEqualTo("a\u0000b");
    }

    @Test
    void everyTruncationAndRandomDamageIsACorruptSnapshotNeverAnotherFailure() throws Exception {
        byte[] body = SnapshotCodec.encode(new StateSnapshot(1.0, 0, 0, randomState(9, 600).image()));
        for (int len = 0; len < body.length; len += Math.max(1, body.length / 2_000)) {
            byte[] cut = Arrays.copyOf(body, len);
            assertThatThrownBy(() -> SnapshotCodec.decode(cut)).as("cut at %d", len)
                    .isInstanceOf(CorruptSnapshotException.class);
        }
        Random rnd = new Random(3);
        for (int i = 0; i < 2_000; i++) {
            byte[] damaged = body.clone();
            damaged[rnd.nextInt(damaged.length)] = (byte) rnd.nextInt(256);
            try {
                SnapshotCodec.decode(damaged); // may decode into another valid image: the CRC catches that
            } catch (CorruptSnapshotException expected) {
                // the only failure allowed
            }
        }
        assertThat(SnapshotCodec.crc32c(body)).isNotEqualTo(SnapshotCodec.crc32c(Arrays.copyOf(body, body.length - 1)));
    }
}
