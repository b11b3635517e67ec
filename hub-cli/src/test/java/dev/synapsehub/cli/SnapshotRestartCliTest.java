package dev.synapsehub.cli;

import dev.synapsehub.journal.SnapshotStore;
import dev.synapsehub.journal.SqliteJournal;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The served hub snapshots on a clean stop and starts from that snapshot; the flags reach the policy. */
class SnapshotRestartCliTest {
    @TempDir
    Path dir;

    private final LoopbackHub hub = new LoopbackHub();

    @AfterEach
    void stop() throws Exception {
        hub.close();
    }

    private static List<SnapshotStore.Info> snapshots(Path db) throws Exception {
        try (SqliteJournal j = SqliteJournal.open(db)) {
            return j.snapshots().list();
        }
    }

    @Test
    void aCleanStopLeavesASnapshotOfTheWholeJournalAndTheHubRestartsFromIt() throws Exception {
        Path db = dir.resolve("hub.db");
        hub.start("--port", "0", "--db", db.toString());
        assertThat(CliTest.run("claim", "T1", "--url", hub.url()).code()).isEqualTo(ExitCodes.OK);
        assertThat(CliTest.run("claim", "T2", "--url", hub.url()).code()).isEqualTo(ExitCodes.OK);
        hub.close();
        List<SnapshotStore.Info> stored = snapshots(db);
        long lastSeq;
        try (SqliteJournal j = SqliteJournal.open(db)) {
            lastSeq = j.lastSeq();
        }
        assertThat(stored).singleElement().extracting(SnapshotStore.Info::seq).isEqualTo(lastSeq);

        hub.start("--port", "0", "--db", db.toString(), "--no-shutdown-snapshot");
        assertThat(CliTest.run("state", "--url", hub.url()).out()).contains("2 live claim(s)").contains("T1").contains("T2");
        assertThat(CliTest.run("release", "T1", "--url", hub.url()).code()).isEqualTo(ExitCodes.OK);
        hub.close();
        assertThat(snapshots(db)).as("--no-shutdown-snapshot").hasSize(1);

        hub.start("--port", "0", "--db", db.toString());
        assertThat(CliTest.run("state", "--url", hub.url()).out()).contains("1 live claim(s)").contains("T2")
                .doesNotContain("T1");
    }

    @Test
    void invalidSnapshotFlagsAreUsageErrors() {
        assertThat(CliTest.run("--db", dir.resolve("x.db").toString(), "--snapshots-kept", "0", "--port", "0").code())
                .isEqualTo(ExitCodes.USAGE);
        assertThat(CliTest.run("--help").out()).contains("--snapshot-interval").contains("--snapshot-every-rows")
                .contains("--snapshots-kept").contains("--no-shutdown-snapshot");
    }
}
