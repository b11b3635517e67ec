package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.JsonNode;
import dev.synapsehub.core.claim.Decision;
import dev.synapsehub.core.state.CoordinationState;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static dev.synapsehub.mesh.MeshReplicationTest.claim;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which intent ids a node may forget (docs/mesh.md, "Intent ids"): past the window an id is
 * kept while its origin's reported hold has not passed its record, forgotten once it has; at
 * the pinned limit the oldest goes all the same and a write of its origin handed over before
 * it is refused, never decided again. The memory round-trips through a format 3 snapshot.
 */
class DecidedIntentsWindowTest {
    private static final JsonNode REPLY = reply();

    private static JsonNode reply() {
        CoordinationState state = new CoordinationState();
        Decision d = state.decide(claim("alice", "T1"), 1000.0);
        return new ReplyCodec().write(d.reply());
    }

    /** A record at some index holding one decision of {@code origin} with {@code intentId}, reporting {@code hold}. */
    private static ReplicatedBatch record(String origin, String intentId, long hold) {
        return new ReplicatedBatch(1, List.of(), List.of(
                new ReplicatedBatch.Decision(origin, null, REPLY, null, 0, intentId, hold)));
    }

    /** {@code count} records of {@code origin}, from index {@code from}, each reporting a hold just below itself. */
    private static void fill(DecidedIntents d, String origin, long from, int count) {
        for (int i = 0; i < count; i++) {
            long index = from + i;
            d.record(index, record(origin, origin + "-" + index, index - 1));
        }
    }

    @Test
    void anIdItsOriginMayStillReplayIsKeptPastTheWindowAndForgottenOnceTheOriginsHoldPassesIt() {
        DecidedIntents d = new DecidedIntents(4, 100);
        d.record(10, record("n2", "queued-on-n2", 9)); // n2 still holds it (its hold is below the record)
        fill(d, "n1", 11, 20);

        assertThat(d.outcome("queued-on-n2")).as("kept past the window: n2 may replay it").isNotNull();
        assertThat(d.pinnedCount()).isEqualTo(1);
        assertThat(d.size()).as("n1's ids past the window are gone: n1's hold passed them").isEqualTo(5);
        assertThat(d.outcome("n1-11")).isNull();

        d.record(31, record("n2", "later-on-n2", 9)); // still holding the queued one: the hold stays
        fill(d, "n1", 32, 4);
        assertThat(d.outcome("queued-on-n2")).isNotNull();
        d.record(36, record("n2", "after-reconciling", 35)); // n2 holds nothing older now
        assertThat(d.outcome("queued-on-n2")).as("n2's hold passed it: it can never be replayed").isNull();
        assertThat(d.outcome("later-on-n2")).as("past the window and below the hold too").isNull();
        assertThat(d.pinnedCount()).isZero();
        assertThat(d.size()).isEqualTo(4);
    }

    @Test
    void anIdOfAnOriginThatNeverReportedAHoldOrOfUnknownOriginIsForgottenPastTheWindowAsBefore() {
        DecidedIntents d = new DecidedIntents(2, 100);
        d.record(5, record("old-node", "no-hold", -1)); // an origin of an older version reports no hold
        d.remember("from-a-format-2-snapshot", new DecidedIntents.Decided(REPLY, null, List.of()));
        fill(d, "n1", 6, 5);
        assertThat(d.outcome("no-hold")).as("nothing would ever release it: not pinned").isNull();
        assertThat(d.outcome("from-a-format-2-snapshot")).isNull();
        assertThat(d.pinnedCount()).isZero();
    }

    @Test
    void anOlderVersionOriginsIdsNeitherFillThePinnedSlotsNorGetItsLaterWritesRefused() {
        DecidedIntents d = new DecidedIntents(2, 3);
        d.record(1, record("n2", "queued-on-n2", 0)); // n2 reports holds and still holds this one
        for (int i = 2; i <= 40; i++) {
            d.record(i, record("old-node", "old-" + i, -1)); // an older version: ids, no hold, no base
        }
        assertThat(d.outcome("queued-on-n2")).as("n2 may still replay it: not pushed out").isNotNull();
        assertThat(d.forcedOut()).isZero();
        assertThat(d.mayHaveForgotten("n2", 0)).isFalse();
        assertThat(d.mayHaveForgotten("old-node", -1))
                .as("an origin that never reported a hold is never refused for a base it cannot send").isFalse();
        assertThat(d.outcome("old-2")).as("forgotten past the window, as before holds").isNull();
        assertThat(d.outcome("old-40")).isNotNull();
    }

    @Test
    void atThePinnedLimitTheOriginKeepingTheMostForgetsItsOwnOldestNotAnotherOrigins() {
        DecidedIntents d = new DecidedIntents(2, 3);
        d.record(1, record("n2", "queued-on-n2", 0)); // the oldest pinned id, of a node holding one write
        for (int i = 2; i <= 4; i++) {
            d.record(i, record("stuck", "stuck-" + i, 1)); // a node whose queue never drains
        }
        fill(d, "n1", 5, 2); // the window moves on: four ids pinned, one more than the limit
        assertThat(d.forcedOut()).isEqualTo(1);
        assertThat(d.outcome("queued-on-n2")).as("n2 keeps fewer: its id stays").isNotNull();
        assertThat(d.outcome("stuck-2")).as("stuck keeps the most: its oldest goes").isNull();
        assertThat(d.mayHaveForgotten("n2", 0)).isFalse();
        assertThat(d.mayHaveForgotten("stuck", 1)).isTrue();
    }

    @Test
    void atThePinnedLimitTheOldestIsForgottenCountedAndItsOriginsEarlierWritesAreRefusedNotDecided() {
        DecidedIntents d = new DecidedIntents(2, 3);
        for (int i = 1; i <= 4; i++) {
            d.record(i, record("stuck", "stuck-" + i, 0)); // a node whose queue never drains
        }
        fill(d, "n1", 5, 2); // the window moves on: stuck-1..4 are pinned, one more than the limit
        assertThat(d.pinnedCount()).isEqualTo(3);
        assertThat(d.forcedOut()).isEqualTo(1);
        assertThat(d.outcome("stuck-1")).as("forced out at the bound").isNull();
        assertThat(d.outcome("stuck-2")).isNotNull();
        assertThat(d.mayHaveForgotten("stuck", 0)).as("handed over before index 1: it may be stuck-1").isTrue();
        assertThat(d.mayHaveForgotten("stuck", -1)).as("a base not known is refused too").isTrue();
        assertThat(d.mayHaveForgotten("stuck", 1)).as("handed over at index 1: its record comes after it").isFalse();
        assertThat(d.mayHaveForgotten("n1", 0)).as("other origins are not affected").isFalse();
    }

    @Test
    void idsOfOneRecordKeepTheirBatchOrderSoAnAppliedAndARestoredNodeEvictTheSameAndWriteTheSameBytes()
            throws Exception {
        List<ReplicatedBatch.Decision> batch = new ArrayList<>();
        List<String> inBatchOrder = new ArrayList<>();
        for (int i = 0; i < 16; i++) {
            String id = "stuck-" + (char) ('p' - i); // batch order unlike hash order
            inBatchOrder.add(id);
            batch.add(new ReplicatedBatch.Decision("stuck", null, REPLY, null, 0, id, 0));
        }
        DecidedIntents applied = new DecidedIntents(2, 16);
        applied.record(1, new ReplicatedBatch(1, List.of(), batch)); // one record, sixteen ids
        fill(applied, "n1", 2, 2); // all sixteen pinned: stuck still holds them
        assertThat(applied.ids().subList(0, 16)).as("pinned ids in log order: index, then place in the batch")
                .isEqualTo(inBatchOrder);

        MeshSnapshotFile file = new MeshSnapshotFile(2, 3, 1000.0, Map.of(), new CoordinationState().image(),
                applied.memory());
        DecidedIntents restored = new DecidedIntents(2, 16);
        restored.restore(MeshSnapshotFile.decode(file.encode()).memory());
        assertThat(restored.ids()).isEqualTo(applied.ids());

        for (DecidedIntents d : List.of(applied, restored)) {
            d.record(4, record("stuck", "stuck-later", 0));
            fill(d, "n1", 5, 2); // stuck-later is pinned past the limit: one of the record's ids goes
        }
        assertThat(applied.outcome(inBatchOrder.get(0))).as("the first of the batch is the oldest").isNull();
        assertThat(restored.ids()).as("the restored node forgot the same id").isEqualTo(applied.ids());
        assertThat(new MeshSnapshotFile(2, 6, 1000.0, Map.of(), new CoordinationState().image(), restored.memory())
                .encode()).as("the same snapshot bytes")
                .isEqualTo(new MeshSnapshotFile(2, 6, 1000.0, Map.of(), new CoordinationState().image(),
                        applied.memory()).encode());
    }

    @Test
    void theMemoryRoundTripsThroughAFormatThreeSnapshotAndBehavesTheSameAfterIt() throws Exception {
        DecidedIntents d = new DecidedIntents(2, 3);
        for (int i = 1; i <= 4; i++) {
            d.record(i, record("stuck", "stuck-" + i, 0));
        }
        fill(d, "n1", 5, 3);
        MeshSnapshotFile file = new MeshSnapshotFile(2, 7, 1000.0, Map.of("n1", 3L),
                new CoordinationState().image(), d.memory());

        MeshSnapshotFile back = MeshSnapshotFile.decode(file.encode());
        DecidedIntents restored = new DecidedIntents(2, 3);
        restored.restore(back.memory());
        assertThat(restored.ids()).isEqualTo(d.ids());
        assertThat(restored.pinnedCount()).isEqualTo(d.pinnedCount());
        assertThat(restored.hold("stuck")).isZero();
        assertThat(restored.hold("n1")).isEqualTo(6);
        assertThat(restored.mayHaveForgotten("stuck", 0)).isTrue();
        assertThat(back.memory().remembered()).extracting(DecidedIntents.Remembered::origin)
                .containsExactly("stuck", "stuck", "stuck", "n1", "n1");

        List<String> before = new ArrayList<>(d.ids());
        d.record(8, record("stuck", "drained", 7));
        restored.record(8, record("stuck", "drained", 7));
        assertThat(restored.ids()).as("the same record forgets the same ids").isEqualTo(d.ids())
                .isNotEqualTo(before).doesNotContain("stuck-2", "stuck-3", "stuck-4");
    }
}
