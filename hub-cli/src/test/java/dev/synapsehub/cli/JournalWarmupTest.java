package dev.synapsehub.cli;

import dev.synapsehub.journal.SqliteJournal;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The journal's libraries load on a thread of their own from the first line of a hub start, while
 * the command line and the options are still read and checked: that thread must touch no journal,
 * so a start refused for a bad option leaves none behind (bad input changes nothing).
 */
class JournalWarmupTest {

    @Test
    void aStartRefusedForABadOptionCreatesNoJournalWhileTheLibrariesLoad(@TempDir Path dir) throws Exception {
        Path db = dir.resolve("hub.db");
        // the warm-up thread starts before the command line is read; --relay-max-lines is refused
        // later, in the configuration phase of the start, where the journal would be opened next
        int code = Main.run(new String[] {"--port", "0", "--db", db.toString(), "--relay-log",
                dir.resolve("relay.log").toString(), "--relay-max-lines", "0"});
        assertThat(code).isEqualTo(ExitCodes.USAGE);
        // let the warm-up thread (a daemon) finish whatever it does: it loads, it must not open
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
