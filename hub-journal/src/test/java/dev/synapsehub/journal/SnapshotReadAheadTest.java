package dev.synapsehub.journal;

import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.journal.JournalException;
import dev.synapsehub.core.state.CoordinationState;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static dev.synapsehub.journal.Fixtures.await;
import static dev.synapsehub.journal.Fixtures.granted;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link SnapshotReadAhead}: a start takes the body read ahead only for the very snapshot it
 * chose, of the very file it opened; any other snapshot or file is read by the start itself,
 * with its own checks, and a missing file is not created.
 */
class SnapshotReadAheadTest {
    @TempDir
    Path dir;

    private final Fixtures.ManualClock clock = new Fixtures.ManualClock(1_000);
    private static final SnapshotPolicy MANUAL = new SnapshotPolicy(0, 0, 3, true);

    private String expected;

    private Path db() {
        return dir.resolve("hub.db");
    }

    private DurableCoordination open(Path file) throws JournalException {
        return DurableCoordination.open(file, clock, CoordinationState::new, ActorSettings.DEFAULTS, MANUAL);
    }

    private static String authority(DurableCoordination hub, double now) {
        return await(hub.actor().read(s -> s.claims().snapshot(now) + "|" + s.claims().epochCounter() + "|"
                + s.idempotency().view() + "|" + s.lastSeq()));
    }

    private void claims(DurableCoordination hub, int from, int to) {
        List<CompletableFuture<dev.synapsehub.core.actor.Outcome>> pending = new ArrayList<>();
        for (int i = from; i < to; i++) {
            pending.add(hub.actor().submit(Fixtures.keyedClaim("agent" + (i % 7), "task-" + i, "k" + i)));
        }
        pending.forEach(f -> granted(await(f)));
    }

    /** A journal whose shutdown snapshot covers 300 keyed claims. */
    @BeforeEach
    void aJournalWithASnapshot() throws Exception {
        try (DurableCoordination hub = open(db())) {
            claims(hub, 0, 300);
            expected = authority(hub, clock.nowSeconds());
        }
    }

    private static SnapshotStore.Info newest(Path file) throws JournalException {
        try (SqliteJournal j = SqliteJournal.open(file)) {
            return j.snapshots().list().get(0);
        }
    }

    private String recovered(Path file, SnapshotReadAhead readAhead) throws JournalException {
        try (SqliteJournal j = SqliteJournal.open(file)) {
            StateRecovery.Recovery r = StateRecovery.recover(j, CoordinationState::new, clock.nowSeconds(),
                    StartupPhases.startingNow(), readAhead);
            assertThat(r.snapshot()).as("started from a snapshot").isNotNull();
            assertThat(r.fallbacks()).as("from the newest").isEmpty();
            CoordinationState s = r.state();
            return s.claims().snapshot(clock.nowSeconds()) + "|" + s.claims().epochCounter() + "|"
                    + s.idempotency().view() + "|" + s.lastSeq();
        }
    }

    @Test
    void theSnapshotReadAheadIsTheCheckedBodyOfTheOneTheStartChoosesAndIsHandedOverOnce() throws Exception {
        SnapshotStore.Info info = newest(db());
        byte[] stored;
        try (SqliteJournal j = SqliteJournal.open(db())) {
            stored = j.snapshots().read(info);
        }
        SnapshotReadAhead ahead = SnapshotReadAhead.start(db());
        assertThat(ahead.take(db(), info)).isEqualTo(stored);
        assertThat(ahead.take(db(), info)).as("handed over once, then let go of").isNull();

        assertThat(recovered(db(), SnapshotReadAhead.start(db()))).isEqualTo(expected);
    }

    @Test
    void aSnapshotWrittenAfterTheReadAheadIsReadByTheStart() throws Exception {
        SnapshotStore.Info before = newest(db());
        SnapshotReadAhead older = SnapshotReadAhead.start(db());
        older.awaitRead();
        try (DurableCoordination hub = open(db())) {
            claims(hub, 300, 360);
            expected = authority(hub, clock.nowSeconds());
        } // a newer shutdown snapshot
        assertThat(newest(db())).isNotEqualTo(before);
        assertThat(SnapshotReadAhead.start(db()).take(db(), before)).as("an older row is no match").isNull();
        // the body read ahead covers fewer rows than the snapshot chosen: used, it would be refused
        // (its seq is not the row's) and the start would fall back to the older snapshot
        assertThat(recovered(db(), older)).as("the newer snapshot, read by the start").isEqualTo(expected);
    }

    @Test
    void anotherFileWithTheSameSnapshotRowIsReadWithItsOwnChecks() throws Exception {
        Path copy = dir.resolve("copy.db");
        Files.copy(db(), copy);
        SnapshotStore.Info info = newest(copy);
        assertThat(info).isEqualTo(newest(db()));
        // the copy's newest body damaged under the same row (id, length, chunks, recorded CRC-32C)
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + copy);
             PreparedStatement q = c.prepareStatement(
                     "UPDATE snapshot_chunks SET data = ? WHERE snapshot_id = ? AND idx = 0")) {
            byte[] damaged;
            try (SqliteJournal j = SqliteJournal.open(db())) {
                damaged = j.snapshots().read(info);
            }
            damaged = java.util.Arrays.copyOf(damaged, Math.min(damaged.length, SnapshotStore.CHUNK_BYTES));
            damaged[damaged.length / 2] ^= 0x20;
            q.setBytes(1, damaged);
            q.setLong(2, info.id());
            assertThat(q.executeUpdate()).isOne();
        }
        SnapshotReadAhead ofOriginal = SnapshotReadAhead.start(db());
        try (SqliteJournal j = SqliteJournal.open(copy)) {
            StateRecovery.Recovery r = StateRecovery.recover(j, CoordinationState::new, clock.nowSeconds(),
                    StartupPhases.startingNow(), ofOriginal);
            assertThat(r.fallbacks()).as("the copy's damage is found, not hidden by the original's body")
                    .singleElement().asString().contains("is unusable: CRC-32C");
        }
    }

    @Test
    void aReadThatDiesEvenOfAnErrorEndsWithNothingReadAndTheStartReadsItself() throws Exception {
        SnapshotReadAhead ahead = SnapshotReadAhead.start(db(), file -> {
            throw new OutOfMemoryError("a 40 MB body on a small heap");
        });
        CompletableFuture<byte[]> taken = CompletableFuture.supplyAsync(() -> ahead.take(db(), newestUnchecked()));
        assertThat(taken.get(30, java.util.concurrent.TimeUnit.SECONDS)).as("ended, not waited on forever").isNull();
        assertThat(ahead.used()).isFalse();

        SnapshotReadAhead broken = SnapshotReadAhead.start(db(), file -> {
            throw new IllegalStateException("a bug in the read");
        });
        assertThat(recovered(db(), broken)).isEqualTo(expected);
        assertThat(broken.used()).isFalse();
    }

    private SnapshotStore.Info newestUnchecked() {
        try {
            return newest(db());
        } catch (JournalException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void aMissingJournalIsNotCreatedAndNothingIsReadAhead() throws Exception {
        Path missing = dir.resolve("new.db");
        SnapshotReadAhead ahead = SnapshotReadAhead.start(missing);
        assertThat(ahead.take(missing, newest(db()))).isNull();
        assertThat(missing).doesNotExist();
        assertThat(dir.resolve("new.db-wal")).doesNotExist();
    }
}
