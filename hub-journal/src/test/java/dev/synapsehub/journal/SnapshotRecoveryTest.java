package dev.synapsehub.journal;

import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.command.CheckpointCommand;
import dev.synapsehub.core.command.ReleaseCommand;
import dev.synapsehub.core.journal.JournalException;
import dev.synapsehub.core.state.CoordinationState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.List;

import static dev.synapsehub.journal.Fixtures.await;
import static dev.synapsehub.journal.Fixtures.granted;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Start-up from snapshots: the newest valid one plus the tail; an unusable one (bad checksum,
 * covering more than the journal, cut short) is skipped loudly for the previous one or a full
 * replay, and every path rebuilds the same state.
 */
class SnapshotRecoveryTest {
    @TempDir
    Path dir;

    private final Fixtures.ManualClock clock = new Fixtures.ManualClock(1_000);
    private static final SnapshotPolicy MANUAL_THREE = new SnapshotPolicy(0, 0, 3, true);

    private Path db() {
        return dir.resolve("hub.db");
    }

    private DurableCoordination open() throws JournalException {
        return DurableCoordination.open(db(), clock, CoordinationState::new, ActorSettings.DEFAULTS, MANUAL_THREE);
    }

    private static String authority(DurableCoordination hub, double now) {
        return await(hub.actor().read(s -> s.claims().snapshot(now) + "|" + s.claims().epochCounter() + "|"
                + s.claims().retainedCheckpoint("t2") + "|" + s.idempotency().view() + "|" + s.lastSeq()));
    }

    private void sql(String... statements) throws Exception {
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db()); Statement s = c.createStatement()) {
            for (String sql : statements) {
                s.executeUpdate(sql);
            }
        }
    }

    /** Three snapshots (two by hand, one at shutdown), each followed by more rows; returns the final authority. */
    private String historyWithThreeSnapshots() throws Exception {
        try (DurableCoordination hub = open()) {
            granted(await(hub.actor().submit(Fixtures.claimOf("alice", "t1"))));
            granted(await(hub.actor().submit(Mutation.of(Fixtures.claim("bob", "t2", 30.0)))));
            granted(await(hub.actor().submit(Mutation.of(new CheckpointCommand("bob", "t2", "ck-b", null)))));
            hub.snapshotter().takeNow();
            granted(await(hub.actor().submit(Fixtures.keyedClaim("carol", "t3", "k"))));
            clock.advance(60); // t2 lapses: its checkpoint is retained
            granted(await(hub.actor().submit(Fixtures.claimOf("dave", "t4"))));
            hub.snapshotter().takeNow();
            granted(await(hub.actor().submit(Mutation.of(new ReleaseCommand("alice", "t1", null)))));
            granted(await(hub.actor().submit(Fixtures.claimOf("erin", "t5"))));
            return authority(hub, clock.nowSeconds());
        }
    }

    @Test
    void aCleanStopSnapshotsAndTheNextStartReplaysNoTail() throws Exception {
        String expected = historyWithThreeSnapshots();
        try (DurableCoordination hub = open()) {
            assertThat(hub.recovery().snapshot()).isNotNull();
            assertThat(hub.recovery().snapshot().seq()).isEqualTo(hub.journal().lastSeq());
            assertThat(hub.recovery().tail().rows()).isZero();
            assertThat(hub.recovery().fallbacks()).isEmpty();
            assertThat(authority(hub, clock.nowSeconds())).isEqualTo(expected);
            assertThat(hub.journal().snapshots().list()).hasSize(3);
        }
    }

    @Test
    void aCorruptSnapshotFallsBackToThePreviousThenToAFullReplayLoudly() throws Exception {
        String expected = historyWithThreeSnapshots();
        List<SnapshotStore.Info> stored;
        try (SqliteJournal j = SqliteJournal.open(db())) {
            stored = j.snapshots().list();
        }
        assertThat(stored).hasSize(3);
        // flip bytes in the newest snapshot's body
        sql("UPDATE snapshot_chunks SET data = zeroblob(length(data)) WHERE snapshot_id = " + stored.get(0).id());
        DurableCoordination hub = DurableCoordination.open(db(), clock, CoordinationState::new, ActorSettings.DEFAULTS,
                SnapshotPolicy.NEVER);
        try {
            assertThat(hub.recovery().fallbacks()).singleElement().asString()
                    .contains("snapshot #" + stored.get(0).id()).contains("CRC-32C")
                    .contains("falling back to snapshot #" + stored.get(1).id());
            assertThat(hub.recovery().snapshot().id()).isEqualTo(stored.get(1).id());
            assertThat(hub.recovery().tail().rows()).isPositive();
            assertThat(authority(hub, clock.nowSeconds())).isEqualTo(expected);
            // retired: never tried, kept or counted again
            assertThat(hub.journal().snapshots().list()).extracting(SnapshotStore.Info::id)
                    .containsExactly(stored.get(1).id(), stored.get(2).id());
        } finally {
            hub.close();
        }

        // the second covers more than the journal holds; the third lost a chunk: a full replay
        sql("UPDATE snapshots SET seq = 999999 WHERE id = " + stored.get(1).id(),
                "DELETE FROM snapshot_chunks WHERE snapshot_id = " + stored.get(2).id());
        hub = DurableCoordination.open(db(), clock, CoordinationState::new, ActorSettings.DEFAULTS, SnapshotPolicy.NEVER);
        try {
            List<String> fallbacks = hub.recovery().fallbacks();
            assertThat(fallbacks).hasSize(2);
            assertThat(fallbacks.get(0)).contains("covers seq 999999").contains("journal ends at seq");
            assertThat(fallbacks.get(1)).contains("holds 0 chunks").endsWith("a full replay of the journal");
            assertThat(hub.recovery().snapshot()).isNull();
            assertThat(authority(hub, clock.nowSeconds())).isEqualTo(expected);
        } finally {
            hub.close();
        }
    }

    @Test
    void aSnapshotCutShortIsDiscardedAndTheCompleteOneUsed() throws Exception {
        String expected = historyWithThreeSnapshots();
        sql("INSERT INTO snapshots(seq, created_at, format, bytes, chunks, crc32c, complete) VALUES (1, 1, 1, 0, 0, 0, 0)",
                "INSERT INTO snapshot_chunks(snapshot_id, idx, data) VALUES (last_insert_rowid(), 0, x'00')");
        try (DurableCoordination hub = open()) {
            assertThat(hub.journal().snapshots().incomplete()).isZero();
            assertThat(hub.recovery().fallbacks()).isEmpty();
            assertThat(authority(hub, clock.nowSeconds())).isEqualTo(expected);
        }
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db()); Statement s = c.createStatement();
             var rs = s.executeQuery("SELECT COUNT(*) FROM snapshot_chunks WHERE snapshot_id NOT IN (SELECT id FROM snapshots)")) {
            rs.next();
            assertThat(rs.getInt(1)).as("no orphaned chunks").isZero();
        }
    }

    @Test
    void corruptRowsSkippedBeforeASnapshotAreStillReportedAfterStartingFromIt() throws Exception {
        try (DurableCoordination hub = open()) {
            granted(await(hub.actor().submit(Fixtures.claimOf("alice", "t1"))));
        }
        sql("INSERT INTO events(ts, kind, durability, payload) VALUES (1000, 'release', 'FULL', '{\"task_id\":null}')");
        long bad;
        try (DurableCoordination hub = open()) {
            bad = hub.journal().firstCorruptSeq();
            assertThat(hub.journal().corruptRows()).isEqualTo(1);
            granted(await(hub.actor().submit(Fixtures.claimOf("bob", "t2"))));
        } // the shutdown snapshot covers the bad row
        try (DurableCoordination hub = open()) {
            assertThat(hub.recovery().snapshot().seq()).isGreaterThan(bad);
            assertThat(hub.recovery().tail().corrupt()).isZero();
            assertThat(hub.journal().corruptRows()).as("carried by the snapshot").isEqualTo(1);
            assertThat(hub.journal().firstCorruptSeq()).isEqualTo(bad);
        }
    }

    @Test
    void compactedRowsWithoutAValidSnapshotRefuseToStartRatherThanLoseWork() throws Exception {
        historyWithThreeSnapshots();
        sql("DELETE FROM events WHERE seq <= 3", "INSERT INTO meta(key, value) VALUES ('compacted_through', '3')",
                "UPDATE snapshot_chunks SET data = zeroblob(length(data))");
        assertThatThrownBy(this::open).isInstanceOf(JournalRefusedException.class)
                .hasMessageContaining("rows through seq 3 were compacted").hasMessageContaining("backup");
    }
}
