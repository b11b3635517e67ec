package dev.synapsehub.journal;

import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.actor.Outcome;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.core.state.StateImage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static dev.synapsehub.journal.Fixtures.await;
import static dev.synapsehub.journal.Fixtures.granted;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code journal backup}: a copy taken through the running hub while mutations keep committing
 * is exactly the journal as of the seq it reports (snapshots, compaction floor and rows), and a
 * hub restored from it starts, holds that state and carries on numbering after it.
 */
class BackupTest {
    @TempDir
    Path dir;

    private final Fixtures.ManualClock clock = new Fixtures.ManualClock(1_700_000_000);

    /**
     * The state a journal held as of {@code seq}, expired at {@code now}: its newest snapshot at or
     * before {@code seq} (none: from the start) plus its rows up to {@code seq}.
     */
    private static StateImage stateAt(Path db, long seq, double now) throws Exception {
        try (SqliteJournal j = SqliteJournal.open(db)) {
            CoordinationState state = SnapshotEquivalenceTest.smallState();
            long from = 0;
            for (SnapshotStore.Info info : j.snapshots().list()) {
                if (info.seq() <= seq) {
                    state.restore(SnapshotCodec.decode(j.snapshots().read(info)).image());
                    from = info.seq();
                    break;
                }
            }
            j.replayAfter(from, e -> {
                if (e.seq() <= seq) {
                    state.apply(e);
                }
            });
            state.settle(now, seq);
            return state.image();
        }
    }

    @Test
    void anOnlineBackupUnderLoadRestoresExactlyTheStateAtItsSeq() throws Exception {
        Path db = dir.resolve("hub.db");
        Path copy = dir.resolve("copy.db");
        Retention retention = new Retention(100);
        JournalBackup.Result result;
        AtomicLong committedDuringBackup = new AtomicLong();
        try (DurableCoordination hub = DurableCoordination.open(db, clock, SnapshotEquivalenceTest::smallState,
                ActorSettings.DEFAULTS, new SnapshotPolicy(0, 0, 2, false), retention)) {
            RandomHistory history = new RandomHistory(42);
            for (int burst = 0; burst < 40; burst++) {
                List<CompletableFuture<Outcome>> f = new ArrayList<>();
                for (int i = 0; i < 100; i++) {
                    f.add(hub.actor().submit(history.next()));
                }
                f.forEach(Fixtures::await);
                clock.advance(history.advance());
                if (burst % 15 == 14) {
                    hub.snapshotter().takeNow(); // snapshots, and retention compacts behind them
                }
            }
            assertThat(hub.journal().compactedThrough()).as("the copy starts after compacted rows").isPositive();

            // load keeps committing, bounded in count, while the backup runs through the same actor
            AtomicBoolean stop = new AtomicBoolean();
            RandomHistory more = new RandomHistory(43);
            Thread load = new Thread(() -> {
                for (int i = 0; i < 20_000 && !stop.get(); i++) {
                    if (await(hub.actor().submit(more.next())) instanceof Outcome.Decided d && !d.committed().isEmpty()) {
                        committedDuringBackup.incrementAndGet();
                    }
                }
            });
            load.start();
            while (committedDuringBackup.get() < 50) {
                Thread.onSpinWait();
            }
            result = JournalBackup.copy(hub.journal(), WriterAccess.actor(hub.actor(), 60), retention, copy);
            stop.set(true);
            load.join();
            assertThat(hub.journal().lastSeq()).as("the hub committed past the copy point").isGreaterThan(result.seq());
        }
        assertThat(committedDuringBackup.get()).isGreaterThan(50);
        assertThat(result.snapshots()).isEqualTo(2);
        assertThat(result.summary()).contains("longest hold of the hub's writer");

        double now = clock.nowSeconds() + 10;
        try (SqliteJournal backup = SqliteJournal.open(copy)) {
            assertThat(backup.lastSeq()).isEqualTo(result.seq());
            assertThat(backup.snapshots().list()).hasSize(2);
            JournalCheck.Result check = JournalCheck.verify(backup, SnapshotEquivalenceTest::smallState, now);
            assertThat(check.problems()).isEmpty();
            assertThat(check.compactedThrough()).isPositive();
            assertThat(check.state().image()).as("the backup holds the journal as of its seq")
                    .isEqualTo(stateAt(db, result.seq(), now));
        }
        clock.set(now);
        try (DurableCoordination restored = DurableCoordination.open(copy, clock, SnapshotEquivalenceTest::smallState,
                ActorSettings.DEFAULTS)) {
            assertThat(restored.recovery().snapshot()).isNotNull();
            var claim = (Outcome.Decided) await(restored.actor().submit(Fixtures.claimOf("restorer", "after-restore")));
            granted(claim);
            assertThat(claim.committed().get(0).seq()).isEqualTo(result.seq() + 1);
        }
    }

    @Test
    void anOfflineBackupCopiesEverythingAndNeverOverwrites() throws Exception {
        Path db = dir.resolve("hub.db");
        try (DurableCoordination hub = DurableCoordination.open(db, clock, SnapshotEquivalenceTest::smallState,
                ActorSettings.DEFAULTS, new SnapshotPolicy(0, 0, 2, true))) {
            RandomHistory history = new RandomHistory(7);
            for (int i = 0; i < 500; i++) {
                await(hub.actor().submit(history.next()));
            }
        }
        Path copy = dir.resolve("copy.db");
        JournalBackup.Result result = JournalBackup.offline(db, copy);
        long last;
        try (SqliteJournal j = SqliteJournal.open(db)) {
            last = j.lastSeq();
        }
        assertThat(result.seq()).isEqualTo(last);
        assertThat(result.rows()).isEqualTo(last);
        assertThat(result.summary()).as("no hub's writer was held").doesNotContain("writer");
        assertThat(stateAt(copy, last, clock.nowSeconds())).isEqualTo(stateAt(db, last, clock.nowSeconds()));
        try (SqliteJournal j = SqliteJournal.open(copy)) {
            assertThat(j.snapshots().list()).as("the shutdown snapshot").hasSize(1);
            assertThat(JournalCheck.verify(j, SnapshotEquivalenceTest::smallState, clock.nowSeconds()).problems())
                    .as("snapshot + tail equals a full replay of the copy").isEmpty();
        }
        byte[] before = Files.readAllBytes(copy);
        assertThatThrownBy(() -> JournalBackup.offline(db, copy)).isInstanceOf(BackupTargetRefusedException.class)
                .hasMessageContaining("never overwrites");
        assertThat(Files.readAllBytes(copy)).isEqualTo(before);
        assertThatThrownBy(() -> JournalBackup.offline(db, db)).isInstanceOf(BackupTargetRefusedException.class);
        try (var files = Files.list(dir)) {
            assertThat(files.map(p -> p.getFileName().toString())).noneMatch(n -> n.contains(".partial-"));
        }
    }
}
