package dev.synapsehub.cli;

import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.command.ClaimCommand;
import dev.synapsehub.core.command.ReleaseCommand;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.journal.DurableCoordination;
import dev.synapsehub.journal.Retention;
import dev.synapsehub.journal.SnapshotPolicy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code journal inspect} and {@code verify} report snapshots and retention, and catch a damaged snapshot or row. */
class JournalToolsSnapshotTest {
    @TempDir
    Path dir;

    private static void claimAndRelease(DurableCoordination hub, String task) throws Exception {
        hub.actor().submit(Mutation.of(new ClaimCommand("alice", null, task, "", null, "wt-" + task, List.of(), null))).get();
        hub.actor().submit(Mutation.of(new ReleaseCommand("alice", task, null))).get();
    }

    /** 40 rows, two snapshots, retention keeping 10 rows: rows before the older snapshot are gone. */
    private Path compactedJournal() throws Exception {
        Path db = dir.resolve("hub.db");
        try (DurableCoordination hub = DurableCoordination.open(db, Clock.system(), CoordinationState::new,
                ActorSettings.DEFAULTS, new SnapshotPolicy(0, 0, 2, false), new Retention(10))) {
            for (int i = 0; i < 10; i++) {
                claimAndRelease(hub, "a" + i);
            }
            hub.snapshotter().takeNow();
            for (int i = 0; i < 10; i++) {
                claimAndRelease(hub, "b" + i);
            }
            hub.snapshotter().takeNow();
            hub.actor().submit(Mutation.of(new ClaimCommand("bob", null, "live", "", 3600.0, "w", List.of(), null))).get();
        }
        return db;
    }

    private void sql(Path db, String statement) throws Exception {
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db); Statement s = c.createStatement()) {
            s.executeUpdate(statement);
        }
    }

    @Test
    void inspectAndVerifyReportSnapshotsAndRetention() throws Exception {
        Path db = compactedJournal();
        CliTest.Run inspect = CliTest.run("journal", "inspect", "--db", db.toString());
        assertThat(inspect.code()).as(inspect.err()).isEqualTo(ExitCodes.OK);
        assertThat(inspect.out()).contains("rows           21 retained (last seq 41)")
                .contains("compacted      rows through seq 20 deleted by retention")
                .contains("snapshots      2").contains("#2     seq 40").contains("#1     seq 20").contains("checksum ok")
                .contains("start-up       snapshot #2 (seq 40").contains("then 1 rows replayed")
                .contains("live claims    1");
        CliTest.Run verify = CliTest.run("journal", "verify", "--db", db.toString());
        assertThat(verify.code()).as(verify.err()).isEqualTo(ExitCodes.OK);
        assertThat(verify.out()).startsWith("ok: 2 snapshot(s) verified (newest #2 at seq 40 plus 1 rows);")
                .contains("rows through seq 20 compacted");
    }

    @Test
    void verifyFailsOnADamagedSnapshotOrACorruptRowAfterIt() throws Exception {
        Path db = compactedJournal();
        sql(db, "UPDATE snapshot_chunks SET data = zeroblob(length(data)) WHERE snapshot_id = 2");
        CliTest.Run verify = CliTest.run("journal", "verify", "--db", db.toString());
        assertThat(verify.code()).isEqualTo(ExitCodes.DATA_ERROR);
        assertThat(verify.err()).contains("snapshot #2").contains("CRC-32C");
        CliTest.Run inspect = CliTest.run("journal", "inspect", "--db", db.toString());
        assertThat(inspect.out()).contains("UNUSABLE").contains("fallback: snapshot #2")
                .contains("start-up       snapshot #1 (seq 20");

        Path second = dir.resolve("second");
        java.nio.file.Files.createDirectories(second);
        dir = second;
        Path db2 = compactedJournal();
        sql(db2, "UPDATE events SET payload = '{\"task_id\":null}' WHERE seq = 41");
        CliTest.Run bad = CliTest.run("journal", "verify", "--db", db2.toString());
        assertThat(bad.code()).isEqualTo(ExitCodes.DATA_ERROR);
        assertThat(bad.err()).contains("1 corrupt row(s) after it, first at seq 41");
    }
}
