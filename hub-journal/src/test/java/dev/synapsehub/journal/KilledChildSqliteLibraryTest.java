package dev.synapsehub.journal;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * sqlite-jdbc unpacks its ~1 MB native library at every JVM start and removes it only at a normal
 * exit, so a child JVM killed with SIGKILL (the crash rig kills 50 a run) left one in
 * {@code java.io.tmpdir} for good. The rig's children unpack it into the test's own directory.
 * Which file the child loaded is read from its memory map while it runs: other processes on the
 * machine unpack theirs into /tmp at the same time, so a before-and-after listing of /tmp could
 * not tell the child's file from theirs.
 */
class KilledChildSqliteLibraryTest {
    @TempDir
    Path dir;

    @Test
    void aCrashChildKilledWithItsJournalOpenLeavesItsSqliteLibraryInTheTestsDirectoryOnly() throws Exception {
        assumeTrue(Files.isReadable(Path.of("/proc/self/maps")), "reads the child's memory map from /proc (Linux)");
        Path sqliteDir = ChildJvm.sqliteDirIn(dir);
        Path data = Files.createDirectories(dir.resolve("data"));
        // the rig's own start: back once the child has opened its journal, so SQLite's library is loaded
        CrashRig.Running running = new CrashRig(data, sqliteDir, Map.of(), "library").start(data.resolve("crash.db"), 0, 1);
        Process child = running.process();
        Path library;
        try {
            library = loadedSqliteLibrary(child.pid());
        } finally {
            child.destroyForcibly(); // SIGKILL: no exit hook of the child runs
            child.waitFor(30, TimeUnit.SECONDS);
            running.reader().join(30_000);
        }
        try {
            assertThat(library).as("the library the killed child loaded").startsWith(sqliteDir.toRealPath());
            assertThat(library).as("left behind by the kill, for the test's directory to take").exists();
            assertThat(Path.of(library + ".lck")).as("its lock file, likewise").exists();
        } finally {
            if (!library.startsWith(sqliteDir.toRealPath())) {
                // the leak this test is about, identified as the child's own: not left in /tmp by the test
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
        assertThat(mapped).as("SQLite's library in the child's memory map").hasSize(1);
        return mapped.get(0);
    }
}
