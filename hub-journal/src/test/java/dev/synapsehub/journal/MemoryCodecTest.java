package dev.synapsehub.journal;

import dev.synapsehub.core.command.MemoryCommand;
import dev.synapsehub.core.event.MemoryEvent;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.core.state.StateImage;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Participant-memory events ({@code recall}, {@code finding}, contract A12 PM7) round-trip through
 * the journal codec with their payload verbatim; snapshots (format 3) carry the finding quota's
 * counts, and format-2 bodies written before memory existed are still read.
 */
class MemoryCodecTest {
    private final EventCodec codec = new EventCodec();

    @Test
    void memoryEventsRoundTripVerbatim() throws Exception {
        MemoryEvent recall = new MemoryEvent(1.5, MemoryCommand.Kind.RECALL, "p/a",
                "{\"query_text\":\"h\\u00e9\",\"returned_claim_ids\":[],\"was_used\":false,\"abstained\":false,"
                        + "\"by\":\"p/a\",\"at\":1.4}");
        MemoryEvent finding = new MemoryEvent(2.5, MemoryCommand.Kind.FINDING, "p/a",
                "{\"statement\":\"s\",\"provenance\":{\"project\":\"p\",\"actor\":\"p/a\"}}");
        for (MemoryEvent e : List.of(recall, finding)) {
            assertThat(codec.encode(e)).isEqualTo(e.payloadJson());
            assertThat(codec.decode(e.kind(), e.ts(), codec.encode(e))).contains(e);
            assertThat(codec.decode(e.kind(), e.ts(), codec.encode(e).getBytes(StandardCharsets.UTF_8))).contains(e);
        }
        assertThat(finding.durability()).isEqualTo(dev.synapsehub.core.event.Durability.FULL);
        assertThat(recall.durability()).isEqualTo(dev.synapsehub.core.event.Durability.NORMAL);
    }

    @Test
    void aFindingWithoutItsActorIsCorruptAnyRecallObjectIsKept() throws Exception {
        assertThat(codec.decode("recall", 1.0, "{\"text\":\"x\"}")).as("an imported recall of another shape")
                .contains(new MemoryEvent(1.0, MemoryCommand.Kind.RECALL, "", "{\"text\":\"x\"}"));
        for (String[] bad : List.of(new String[] {"recall", "[]"}, new String[] {"finding", "{\"provenance\":{}}"},
                new String[] {"finding", "{\"provenance\":{\"actor\":7}}"}, new String[] {"finding", "[]"},
                new String[] {"finding", "{"})) {
            assertThatThrownBy(() -> codec.decode(bad[0], 1.0, bad[1])).as(bad[1])
                    .isInstanceOf(EventCodec.CorruptPayloadException.class);
        }
    }

    @Test
    void aSnapshotCarriesTheFindingCountsAndOldBodiesStillRead() throws Exception {
        CoordinationState state = new CoordinationState();
        state.apply(new MemoryEvent(1.0, MemoryCommand.Kind.FINDING, "p/a", "{}"));
        state.apply(new MemoryEvent(1.1, MemoryCommand.Kind.FINDING, "p/a", "{}"));
        state.apply(new MemoryEvent(1.2, MemoryCommand.Kind.RECALL, "p/b", "{}"));
        state.apply(new MemoryEvent(1.3, MemoryCommand.Kind.FINDING, "p/b", "{}"));
        StateImage image = state.image();
        assertThat(image.findingCounts()).containsExactly(java.util.Map.entry("p/a", 2), java.util.Map.entry("p/b", 1));
        StateSnapshot back = SnapshotCodec.decode(SnapshotCodec.encode(new StateSnapshot(2.0, 0, 0, image)));
        assertThat(back.image()).isEqualTo(image);
        CoordinationState restored = new CoordinationState();
        restored.restore(back.image());
        assertThat(restored.findings().admitted("p/a")).isEqualTo(2);

        // a format-5 body: the same sections without the counts section (one varint 0 here; an empty
        // state has no live claims, so format 7's per-claim identities add nothing)
        byte[] current = SnapshotCodec.encode(new StateSnapshot(2.0, 0, 0, new CoordinationState().image()),
                SnapshotCodec.LAST_SEQUENTIAL_FORMAT);
        assertThat(current[8]).isEqualTo((byte) SnapshotCodec.LAST_SEQUENTIAL_FORMAT);
        byte[] old = new byte[current.length - 1];
        System.arraycopy(current, 0, old, 0, current.length - 9);
        System.arraycopy(current, current.length - 8, old, current.length - 9, 8);
        old[8] = 5;
        assertThat(current[current.length - 9]).isZero();
        StateSnapshot fromOld = SnapshotCodec.decode(old);
        assertThat(fromOld.image().findingCounts()).isEmpty();
        assertThat(Arrays.equals(SnapshotCodec.encode(fromOld, SnapshotCodec.LAST_SEQUENTIAL_FORMAT), current)).isTrue();
    }
}
