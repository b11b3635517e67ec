package dev.synapsehub.journal;

import dev.synapsehub.core.state.CoordinationState;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.Executor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Format 8: a section table after the header, the claims decoded on a thread of their own.
 * The same snapshot decodes identically from a format-8 body (on one thread or two) and from a
 * format-7 one; a table that does not match its sections, or a damaged section, is refused as
 * corrupt (naming the section) whichever thread met the damage.
 */
class SectionedSnapshotCodecTest {
    private static final int SECTIONS = 10;
    private static final Executor SAME_THREAD = Runnable::run;

    /** Where the table and the sections lie in a format-8 body. */
    private record Layout(int tableStart, int sectionsStart, long[] ids, long[] lengths) {
        int sectionFrom(int index) {
            int at = sectionsStart;
            for (int i = 0; i < index; i++) {
                at += (int) lengths[i];
            }
            return at;
        }
    }

    private static Layout layout(byte[] body) throws Exception {
        SnapshotBytes.In in = new SnapshotBytes.In(body);
        in.bytes(8);
        assertThat(in.varint()).isEqualTo(SnapshotCodec.FORMAT);
        in.f64();
        in.varint();
        in.varint();
        in.varint();
        int tableStart = in.position();
        int n = (int) in.varint();
        long[] ids = new long[n];
        long[] lengths = new long[n];
        for (int i = 0; i < n; i++) {
            ids[i] = in.varint();
            lengths[i] = in.varint();
        }
        return new Layout(tableStart, in.position(), ids, lengths);
    }

    /** The body with its table rewritten (ids and lengths as given), sections and end unchanged. */
    private static byte[] withTable(byte[] body, Layout layout, long[] ids, long[] lengths) {
        SnapshotBytes.Out out = new SnapshotBytes.Out();
        out.bytes(Arrays.copyOfRange(body, 0, layout.tableStart()));
        out.varint(ids.length);
        for (int i = 0; i < ids.length; i++) {
            out.varint(ids[i]);
            out.varint(lengths[i]);
        }
        out.bytes(Arrays.copyOfRange(body, layout.sectionsStart(), body.length));
        return out.toByteArray();
    }

    private static StateSnapshot snapshot() {
        CoordinationState state = SnapshotCodecTest.randomState(5, 3_000);
        return new StateSnapshot(1_700_000_123.25, 2, 17, state.image());
    }

    @Test
    void theSameSnapshotDecodesIdenticallyFromFormatEightOnOneOrTwoThreadsAndFromFormatSeven() throws Exception {
        StateSnapshot snapshot = snapshot();
        assertThat(snapshot.image().claims().live()).isNotEmpty();
        assertThat(snapshot.image().idempotency()).isNotEmpty();
        byte[] eight = SnapshotCodec.encode(snapshot);
        byte[] seven = SnapshotCodec.encode(snapshot, SnapshotCodec.LAST_SEQUENTIAL_FORMAT);
        assertThat(eight[8]).isEqualTo((byte) 8);
        assertThat(seven[8]).isEqualTo((byte) 7);

        assertThat(SnapshotCodec.decode(eight)).isEqualTo(snapshot);
        assertThat(SnapshotCodec.decode(eight, SAME_THREAD)).isEqualTo(snapshot);
        assertThat(SnapshotCodec.decode(seven)).isEqualTo(snapshot);

        // the table's ids are 1..10 in body order, and its lengths cover the format-7 sections exactly
        Layout layout = layout(eight);
        assertThat(layout.ids()).containsExactly(1, 2, 3, 4, 5, 6, 7, 8, 9, 10);
        byte[] sections = Arrays.copyOfRange(eight, layout.sectionsStart(), eight.length);
        byte[] sevenSections = Arrays.copyOfRange(seven, layout.tableStart(), seven.length);
        assertThat(sections).isEqualTo(sevenSections);
        assertThat(Arrays.stream(layout.lengths()).sum()).isEqualTo(sections.length - 8);
    }

    @Test
    void anEmptyStateRoundTripsWithEverySectionPresent() throws Exception {
        StateSnapshot empty = new StateSnapshot(1.0, 0, 0, new CoordinationState().image());
        byte[] body = SnapshotCodec.encode(empty);
        long[] lengths = layout(body).lengths();
        assertThat(lengths).hasSize(SECTIONS);
        assertThat(Arrays.stream(lengths).min().orElseThrow()).isGreaterThanOrEqualTo(1);
        assertThat(SnapshotCodec.decode(body)).isEqualTo(empty);
    }

    @Test
    void aTableThatDoesNotMatchItsSectionsIsRefused() throws Exception {
        byte[] body = SnapshotCodec.encode(snapshot());
        Layout layout = layout(body);
        long[] ids = layout.ids();
        long[] lengths = layout.lengths();

        // the claims section said one byte longer, the ledger one byte shorter: same total
        long[] shifted = lengths.clone();
        shifted[0]++;
        shifted[1]--;
        assertRefused(withTable(body, layout, ids, shifted), "claims section ends at byte");

        long[] swapped = ids.clone();
        swapped[2] = 4;
        swapped[3] = 3;
        assertRefused(withTable(body, layout, swapped, lengths), "has id 4, not 3");

        long[] longer = lengths.clone();
        longer[9]++;
        assertRefused(withTable(body, layout, ids, longer), "the section table covers");

        long[] huge = lengths.clone();
        huge[4] = body.length + 1L;
        assertRefused(withTable(body, layout, ids, huge), "messaging section length");

        long[] zero = lengths.clone();
        zero[6] = 0;
        assertRefused(withTable(body, layout, ids, zero), "owed receipts section length 0");

        assertRefused(withTable(body, layout, Arrays.copyOf(ids, 9), Arrays.copyOf(lengths, 9)),
                "lists 9 sections");
    }

    @Test
    void aDamagedClaimsSectionIsRefusedFromItsOwnThreadAndADamagedOtherSectionFromTheCaller() throws Exception {
        byte[] body = SnapshotCodec.encode(snapshot());
        Layout layout = layout(body);
        int claimsFrom = layout.sectionFrom(0);
        int claimsTo = layout.sectionFrom(1);

        // a live claim's status spelled wrongly: only the claims thread can see it
        byte[] status = "\u0008claimed".getBytes(StandardCharsets.US_ASCII);
        int at = indexOf(body, status, claimsFrom, claimsTo);
        assertThat(at).as("a claimed status in the claims section").isNotNegative();
        byte[] badClaims = body.clone();
        badClaims[at + 3] = 'X';
        assertRefused(badClaims, "claims section: unknown claim status clXimed");
        assertThatThrownBy(() -> SnapshotCodec.decode(badClaims, SAME_THREAD))
                .isInstanceOf(CorruptSnapshotException.class).hasMessageContaining("unknown claim status");

        // the finding counts (the last section) cut by a byte its length still claims
        int findingsFrom = layout.sectionFrom(9);
        byte[] badFindings = body.clone();
        badFindings[findingsFrom] = 5; // five counts in a one-byte section
        assertRefused(badFindings, "finding counts section");

        // both at once: one typed refusal, no hang, no other exception
        byte[] both = badClaims.clone();
        both[findingsFrom] = 5;
        assertRefused(both, "section");
    }

    @Test
    void everyTruncationOfASectionedBodyIsACorruptSnapshot() throws Exception {
        byte[] body = SnapshotCodec.encode(new StateSnapshot(1.0, 0, 0, SnapshotCodecTest.randomState(9, 600).image()));
        for (int len = 0; len < body.length; len += Math.max(1, body.length / 1_000)) {
            byte[] cut = Arrays.copyOf(body, len);
            assertThatThrownBy(() -> SnapshotCodec.decode(cut)).as("cut at %d", len)
                    .isInstanceOf(CorruptSnapshotException.class);
        }
    }

    private static void assertRefused(byte[] body, String message) {
        assertThatThrownBy(() -> SnapshotCodec.decode(body)).isInstanceOf(CorruptSnapshotException.class)
                .hasMessageContaining(message);
    }

    private static int indexOf(byte[] body, byte[] needle, int from, int to) {
        for (int i = from; i + needle.length <= to; i++) {
            if (Arrays.equals(body, i, i + needle.length, needle, 0, needle.length)) {
                return i;
            }
        }
        return -1;
    }
}
