package dev.synapsehub.journal;

import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.command.ReleaseCommand;
import dev.synapsehub.core.state.CoordinationState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

import static dev.synapsehub.journal.Fixtures.await;
import static dev.synapsehub.journal.Fixtures.granted;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A snapshot that start-up found unusable (and skipped with a WARN) is retired: left listed,
 * rotation would keep it as one of the --snapshots-kept and delete the valid snapshot the hub
 * actually started from, and retention would compact up to the unusable one's seq, so after
 * the next snapshot a single further damage would make the journal unstartable. The
 * documented guarantee is "one damaged snapshot always has a complete fallback".
 */
class UnusableSnapshotRetirementTest {
    @TempDir
    Path dir;

    private final Fixtures.ManualClock clock = new Fixtures.ManualClock(1_000);
    /** Manual snapshots, two kept, none at shutdown: every snapshot in this test is taken by hand. */
    private static final SnapshotPolicy MANUAL = new SnapshotPolicy(0, 0, 2, false);

    private Path db() {
        return dir.resolve("hub.db");
    }

    private DurableCoordination open() throws Exception {
        return DurableCoordination.open(db(), clock, CoordinationState::new, ActorSettings.DEFAULTS, MANUAL,
                new Retention(0));
    }

    private static void churn(DurableCoordination hub, String prefix, int n) {
        for (int i = 0; i < n; i++) {
            granted(await(hub.actor().submit(Fixtures.claimOf("alice", prefix + i))));
            granted(await(hub.actor().submit(Mutation.of(new ReleaseCommand("alice", prefix + i, null)))));
        }
    }

    private void sql(String statement) throws Exception {
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db()); Statement s = c.createStatement()) {
            s.executeUpdate(statement);
        }
    }

    /** The kept snapshots whose body passes its checks, newest first. */
    private List<Long> loadable() throws Exception {
        List<Long> ok = new ArrayList<>();
        try (SqliteJournal j = SqliteJournal.open(db())) {
            for (SnapshotStore.Info info : j.snapshots().list()) {
                try {
                    j.snapshots().read(info);
                    ok.add(info.seq());
                } catch (CorruptSnapshotException e) {
                    // unusable
                }
            }
        }
        return ok;
    }

    @Test
    void aSnapshotSkippedAtStartUpIsNotCountedAsTheFallbackRotationAndRetentionKeep() throws Exception {
        long b;
        try (DurableCoordination hub = open()) {
            churn(hub, "a", 10);
            hub.snapshotter().takeNow(); // A
            churn(hub, "b", 10);
            b = hub.snapshotter().takeNow().info().id(); // B; compacts through A
            churn(hub, "c", 10);
        }
        // B is damaged (bit rot): the next start skips it and starts from A plus the tail
        sql("UPDATE snapshot_chunks SET data = zeroblob(length(data)) WHERE snapshot_id = " + b);
        try (DurableCoordination hub = open()) {
            assertThat(hub.recovery().fallbacks()).hasSize(1);
            assertThat(hub.snapshotter().unusableAtStart()).isEqualTo(1);
            churn(hub, "d", 5);
            hub.snapshotter().takeNow(); // C: rotation keeps [C, B(damaged)], deletes A; compaction to B's seq
        }
        // the documented guarantee: the newest snapshot always has a complete, usable fallback
        assertThat(loadable()).as("usable snapshots kept after the snapshot that followed a fallback start")
                .hasSizeGreaterThanOrEqualTo(2);
    }

    @Test
    void afterThatOneMoreDamagedSnapshotMakesTheJournalUnstartable() throws Exception {
        long b;
        try (DurableCoordination hub = open()) {
            churn(hub, "a", 10);
            hub.snapshotter().takeNow();
            churn(hub, "b", 10);
            b = hub.snapshotter().takeNow().info().id();
            churn(hub, "c", 10);
        }
        sql("UPDATE snapshot_chunks SET data = zeroblob(length(data)) WHERE snapshot_id = " + b);
        long c;
        try (DurableCoordination hub = open()) {
            churn(hub, "d", 5);
            c = hub.snapshotter().takeNow().info().id();
        }
        // a second, independent damage of the newest snapshot: with a real fallback kept this would start
        sql("UPDATE snapshot_chunks SET data = zeroblob(length(data)) WHERE snapshot_id = " + c);
        try (DurableCoordination hub = open()) { // currently: JournalRefusedException "compacted ... no valid snapshot"
            assertThat(hub.recovery().snapshot()).isNotNull();
        }
    }

    @Test
    void aSkippedSnapshotThatClaimsAHigherSeqStopsEverySnapshotAfterIt() throws Exception {
        long b;
        try (DurableCoordination hub = open()) {
            churn(hub, "a", 10);
            hub.snapshotter().takeNow();
            churn(hub, "b", 10);
            b = hub.snapshotter().takeNow().info().id();
        }
        sql("UPDATE snapshots SET seq = 999999 WHERE id = " + b); // skipped at start: "covers seq 999999"
        SnapshotPolicy everyRow = new SnapshotPolicy(0, 1, 2, true);
        try (DurableCoordination hub = DurableCoordination.open(db(), clock, CoordinationState::new,
                ActorSettings.DEFAULTS, everyRow, new Retention(0))) {
            assertThat(hub.recovery().fallbacks()).hasSize(1);
            assertThat(hub.snapshotter().lastSeq()).as("counted from the snapshot loaded")
                    .isEqualTo(hub.recovery().snapshot().seq());
            churn(hub, "c", 5);
            hub.snapshotter().tick(); // 10 rows since the last snapshot the hub actually has: due
            assertThat(hub.snapshotter().taken()).as("snapshots taken by the every-row policy").isPositive();
        }
    }
}
