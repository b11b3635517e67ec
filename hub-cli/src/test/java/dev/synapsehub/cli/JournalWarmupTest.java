package dev.synapsehub.cli;

import dev.synapsehub.journal.SqliteJournal;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The journal's libraries load on a thread of their own from the first line of a hub start, while
 * the options are still checked: that thread must touch no journal, so a start refused for a bad
 * option leaves none behind (bad input changes nothing).
 */
class JournalWarmupTest {

    @Test
    void aStartRefusedForABadOptionCreatesNoJournalWhileTheLibrariesLoad(@TempDir Path dir) throws Exception {
        Path db = dir.resolve("hub.db");
        SynapseHubCommand command = new SynapseHubCommand();
        // --relay-max-lines is checked in the configuration phase, after the warm-up thread started
        new CommandLine(command).parseArgs("--port", "0", "--db", db.toString(), "--relay-log",
                dir.resolve("relay.log").toString(), "--relay-max-lines", "0");
        assertThatThrownBy(() -> HubDaemon.start(command.serve, command.federation, () -> false))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--relay-max-lines");
        // give the warm-up thread (a daemon) time to finish whatever it does: it loads, it must not open
        Thread warmup = Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().equals("synapse-journal-warmup")).findFirst().orElse(null);
        if (warmup != null) {
            warmup.join(60_000);
        }
        try (Stream<Path> left = Files.list(dir)) {
            assertThat(left).as("files the refused start left").isEmpty();
        }
    }

    @Test
    void loadingTheLibrariesOpensNothingAndAJournalOpensAfterIt(@TempDir Path dir) throws Exception {
        Path db = dir.resolve("hub.db");
        SqliteJournal.loadLibraries();
        SqliteJournal.loadLibraries(); // twice: the second finds everything loaded
        try (Stream<Path> left = Files.list(dir)) {
            assertThat(left).isEmpty();
        }
        try (SqliteJournal journal = SqliteJournal.open(db)) {
            assertThat(journal.lastSeq()).isZero();
        }
    }
}
