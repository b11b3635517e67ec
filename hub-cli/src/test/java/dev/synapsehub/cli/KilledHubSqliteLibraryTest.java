package dev.synapsehub.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * sqlite-jdbc unpacks its ~1 MB native library at every JVM start and removes it only at a normal
 * exit, so each hub the process tests killed with SIGKILL ({@link HubProcess#kill}) left one in
 * {@code java.io.tmpdir} for good. A {@link HubProcess} on the test class path unpacks it beside
 * its log, in the test's directory. Which file the hub loaded is read from its memory map while it
 * runs: other processes on the machine unpack theirs into /tmp at the same time, so a
 * before-and-after listing of /tmp could not tell the hub's file from theirs.
 */
class KilledHubSqliteLibraryTest {
    @TempDir
    Path dir;

    @Test
    void aHubKilledWithItsJournalOpenLeavesItsSqliteLibraryInTheTestsDirectoryOnly() throws Exception {
        assumeTrue(Files.isReadable(Path.of("/proc/self/maps")), "reads the hub's memory map from /proc (Linux)");
        Path library;
        try (HubProcess hub = new HubProcess("hub", HubProcess.freePort(), dir.resolve("hub.log"),
                List.of("--db", dir.resolve("hub.db").toString()))) {
            hub.start().awaitLog("listening on", HubProcess.START); // the journal is open: SQLite's library is loaded
            try {
                library = loadedSqliteLibrary(hub.pid());
            } finally {
                hub.kill(); // SIGKILL: no exit hook of the hub runs
            }
        }
        Path sqliteDir = ChildJvm.sqliteDirIn(dir).toRealPath();
        try {
            assertThat(library).as("the library the killed hub loaded").startsWith(sqliteDir);
            assertThat(library).as("left behind by the kill, for the test's directory to take").exists();
            assertThat(Path.of(library + ".lck")).as("its lock file, likewise").exists();
        } finally {
            if (!library.startsWith(sqliteDir)) {
                // the leak this test is about, identified as the hub's own: not left in /tmp by the test
                Files.deleteIfExists(library);
                Files.deleteIfExists(Path.of(library + ".lck"));
            }
        }
    }

    /** The file of SQLite's native library that process {@code pid} has mapped. */
    private static Path loadedSqliteLibrary(long pid) throws IOException {
        List<Path> mapped = Files.readAllLines(Path.of("/proc", Long.toString(pid), "maps")).stream()
                .filter(line -> line.contains("libsqlitejdbc"))
                .map(line -> Path.of(line.substring(line.indexOf('/')))) // the path is the last field
                .distinct().toList();
        assertThat(mapped).as("SQLite's library in the hub's memory map").hasSize(1);
        return mapped.get(0);
    }
}
