package dev.synapsehub.cli;

import dev.synapsehub.journal.SnapshotReadAhead;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The command's snapshot read-ahead ({@link Main#loadJournalIfServing}): a single hub started
 * with {@code --db} has its newest snapshot read while its options are, and the start loads it;
 * a subcommand, a mesh node or an in-memory hub read nothing ahead.
 */
class SnapshotReadAheadCliTest {
    @TempDir
    Path dir;

    private final LoopbackHub hub = new LoopbackHub();

    @AfterEach
    void stop() throws Exception {
        hub.close();
    }

    @Test
    void aHubStartedWithItsJournalLoadsTheSnapshotReadAhead() throws Exception {
        Path db = dir.resolve("hub.db");
        hub.start("--port", "0", "--db", db.toString());
        assertThat(CliTest.run("claim", "T1", "--url", hub.url()).code()).isEqualTo(ExitCodes.OK);
        assertThat(CliTest.run("claim", "T2", "--url", hub.url()).code()).isEqualTo(ExitCodes.OK);
        hub.close(); // the shutdown snapshot

        String[] args = {"--port", "0", "--db", db.toString()};
        SnapshotReadAhead ahead = Main.loadJournalIfServing(args);
        hub.start(ahead, args);
        assertThat(ahead.used()).as("the start loaded the body read ahead").isTrue();
        assertThat(CliTest.run("state", "--url", hub.url()).out()).contains("2 live claim(s)").contains("T1")
                .contains("T2");
    }

    @Test
    void aSubcommandAMeshNodeOrAnInMemoryHubReadsNothingAhead() {
        String db = dir.resolve("hub.db").toString();
        for (String[] args : new String[][] {
                {"journal", "verify", "--db", db},
                {"--db", db, "--mesh-id", "n1", "--mesh-peers", "n1=127.0.0.1:1"},
                {"--port", "0"}}) {
            assertThat(Main.loadJournalIfServing(args)).as(String.join(" ", args)).isSameAs(SnapshotReadAhead.none());
        }
        assertThat(Main.loadJournalIfServing(new String[] {"--db=" + db})).isNotSameAs(SnapshotReadAhead.none());
    }
}
