package dev.synapsehub.cli;

import dev.synapsehub.journal.SqliteJournal;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/** A durable hub's snapshots reach {@code /metrics} as measured counts; a hub without a journal exports none. */
class SnapshotMetricsCliTest {
    @TempDir
    Path dir;

    private final LoopbackHub hub = new LoopbackHub();

    @AfterEach
    void stop() throws Exception {
        hub.close();
    }

    private static long sample(String metrics, String name) {
        Matcher m = Pattern.compile("(?m)^" + name + " (\\d+)$").matcher(metrics);
        assertThat(m.find()).as(name + " in\n" + metrics).isTrue();
        return Long.parseLong(m.group(1));
    }

    @Test
    void snapshotsTakenByThePolicyAreCountedWithTheSeqTheyCover() throws Exception {
        Path db = dir.resolve("hub.db");
        HubDaemon daemon = hub.start("--port", "0", "--db", db.toString(), "--metrics", "--snapshot-every-rows", "2");
        String before = CorruptRowHealthTest.get(daemon.port(), "/metrics");
        assertThat(sample(before, "synapse_snapshots_taken_total")).isZero();
        assertThat(sample(before, "synapse_snapshot_failures_total")).isZero();
        assertThat(sample(before, "synapse_snapshot_upkeep_failures_total")).isZero();
        assertThat(sample(before, "synapse_snapshot_last_seq")).isZero();

        assertThat(CliTest.run("claim", "T1", "--url", hub.url()).code()).isEqualTo(ExitCodes.OK);
        assertThat(CliTest.run("claim", "T2", "--url", hub.url()).code()).isEqualTo(ExitCodes.OK);
        long deadline = System.nanoTime() + 30_000_000_000L; // the policy's timer looks once a second
        String after = CorruptRowHealthTest.get(daemon.port(), "/metrics");
        while (sample(after, "synapse_snapshots_taken_total") == 0 && System.nanoTime() < deadline) {
            Thread.sleep(100);
            after = CorruptRowHealthTest.get(daemon.port(), "/metrics");
        }
        assertThat(sample(after, "synapse_snapshots_taken_total")).isPositive();
        long covered = sample(after, "synapse_snapshot_last_seq");
        assertThat(CorruptRowHealthTest.get(daemon.port(), "/health")).contains("\"status\":\"ok\"");
        hub.close();
        try (SqliteJournal j = SqliteJournal.open(db)) {
            assertThat(covered).isPositive();
            assertThat(j.snapshots().list()).extracting(i -> i.seq()).as("the snapshot /metrics reported is stored")
                    .contains(covered);
        }
    }

    @Test
    void aHubWithoutAJournalExportsNoSnapshotFigures() throws Exception {
        HubDaemon daemon = hub.start("--port", "0", "--metrics");
        assertThat(CorruptRowHealthTest.get(daemon.port(), "/metrics")).doesNotContain("synapse_snapshot");
    }
}
