package dev.synapsehub.journal;

import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.MutationDecider;
import dev.synapsehub.core.actor.Outcome;
import dev.synapsehub.core.board.BoardLimits;
import dev.synapsehub.core.claim.RegistryLimits;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.messaging.MessagingLimits;
import dev.synapsehub.core.resource.ResourceLimits;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.core.state.StateImage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static dev.synapsehub.journal.Fixtures.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Snapshot plus tail rebuilds exactly what a full replay rebuilds (INV-RR-1), over a long
 * random history through the real actor and SQLite journal, with snapshots taken at random
 * points while it runs: for every stored snapshot, the state restored from it and the rows
 * after it equals the state of a full replay, image for image, and both then decide the same
 * random continuation identically (replies and events).
 *
 * <p>The bounds are small so the history evicts: chat history, notes, dead letters, pending
 * projections, receipts, retained checkpoints and the idempotency ledger all run over their caps.
 */
class SnapshotEquivalenceTest {
    @TempDir
    Path dir;

    private final Fixtures.ManualClock clock = new Fixtures.ManualClock(1_700_000_000);

    static CoordinationState smallState() {
        return new CoordinationState(new RegistryLimits(120, 6, 16, 3), 40, new BoardLimits(30, 8, 6),
                new ResourceLimits(2, 90), new MessagingLimits(25, 3, 600, 2, 3, 4, 4, 3));
    }

    @Test
    void everySnapshotPlusItsTailRebuildsWhatAFullReplayRebuilds() throws Exception {
        Path db = dir.resolve("hub.db");
        RandomHistory history = new RandomHistory(20_26_11);
        List<Long> snapshotSeqs = new ArrayList<>();
        try (DurableCoordination hub = DurableCoordination.open(db, clock, SnapshotEquivalenceTest::smallState,
                ActorSettings.DEFAULTS)) {
            Snapshotter snapshots = Snapshotter.start(hub.journal(), hub.actor(), clock,
                    new SnapshotPolicy(0, 0, 1_000, false), Retention.keepAll());
            java.util.Random when = new java.util.Random(7);
            for (int burst = 0; burst < 150; burst++) {
                List<CompletableFuture<Outcome>> inFlight = new ArrayList<>();
                for (int i = 0; i < 100; i++) {
                    inFlight.add(hub.actor().submit(history.next()));
                }
                if (when.nextInt(8) == 0) {
                    // taken while the burst is still being decided: the image is of a commit boundary
                    snapshotSeqs.add(snapshots.takeNow().info().seq());
                }
                inFlight.forEach(Fixtures::await);
                clock.advance(history.advance());
            }
            snapshots.close();
        }
        assertThat(snapshotSeqs).hasSizeGreaterThan(10);

        clock.advance(30);
        double now = clock.nowSeconds();
        try (SqliteJournal journal = SqliteJournal.open(db)) {
            assertThat(journal.lastSeq()).isGreaterThan(10_000);
            List<SnapshotStore.Info> stored = journal.snapshots().list();
            assertThat(stored).extracting(SnapshotStore.Info::seq).containsExactlyInAnyOrderElementsOf(snapshotSeqs);
            CoordinationState replayed = smallState();
            journal.replayAfter(0, replayed::apply);
            replayed.settle(now, journal.lastSeq());
            StateImage expected = replayed.image();
            assertEvictingHistory(expected);
            for (SnapshotStore.Info info : stored) {
                CoordinationState restored = restored(journal, info, now);
                assertThat(restored.image()).as("snapshot at seq %d plus its tail", info.seq()).isEqualTo(expected);
            }
            // the oldest, a middle and the newest snapshot also decide the same future as a full replay
            for (SnapshotStore.Info info : List.of(stored.get(stored.size() - 1), stored.get(stored.size() / 2),
                    stored.get(0))) {
                CoordinationState full = smallState();
                journal.replayAfter(0, full::apply);
                full.settle(now, journal.lastSeq());
                assertSameFuture(full, restored(journal, info, now), now, info.seq());
            }
            assertThat(journal.lastReplay().clean()).isTrue();
        }
    }

    private static CoordinationState restored(SqliteJournal journal, SnapshotStore.Info info, double now)
            throws Exception {
        CoordinationState restored = smallState();
        restored.restore(SnapshotCodec.decode(journal.snapshots().read(info)).image());
        journal.replayAfter(info.seq(), restored::apply);
        restored.settle(now, journal.lastSeq());
        return restored;
    }

    /** The history reached every bound, so eviction order was part of what was compared. */
    private static void assertEvictingHistory(StateImage image) {
        assertThat(image.messaging().history()).hasSize(25);
        assertThat(image.messaging().directed()).hasSize(25);
        assertThat(image.messaging().pendingReceipts()).isNotEmpty();
        assertThat(image.messaging().pending()).isNotEmpty();
        assertThat(image.messaging().watermarks()).hasSize(4);
        assertThat(image.messaging().deadLetters()).isNotEmpty();
        assertThat(image.idempotency()).hasSize(40);
        assertThat(image.board().notes()).hasSize(30);
        assertThat(image.board().tasks()).isNotEmpty();
        assertThat(image.claims().live()).isNotEmpty();
        assertThat(image.claims().retained()).isNotEmpty();
        assertThat(image.pins()).as("identity pins are part of what was compared").isNotEmpty();
    }

    /** Both states decide the same random continuation identically. */
    private static void assertSameFuture(CoordinationState a, CoordinationState b, double start, long seed) {
        RandomHistory future = new RandomHistory(seed);
        double now = start;
        for (int i = 0; i < 400; i++) {
            Mutation m = future.next();
            MutationDecider.Result ra = MutationDecider.decide(a, m, now);
            MutationDecider.Result rb = MutationDecider.decide(b, m, now);
            assertThat(rb).as("decision %d after the snapshot at seq %d", i, seed).isEqualTo(ra);
            if (ra instanceof MutationDecider.Fresh fresh) {
                for (CoordinationEvent e : fresh.events()) {
                    a.apply(e);
                }
                for (CoordinationEvent e : ((MutationDecider.Fresh) rb).events()) {
                    b.apply(e);
                }
            }
            now += future.advance() / 4;
        }
        assertThat(b.image()).isEqualTo(a.image());
    }
}
