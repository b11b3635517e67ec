package dev.synapsehub.journal;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The command line of a child JVM that a test starts on this module's test class path, with
 * SQLite's native library unpacked into a directory the test owns. sqlite-jdbc otherwise copies
 * its ~1 MB library into {@code java.io.tmpdir} at every start and removes it only on a normal
 * exit, so each child a test kills with SIGKILL left one in /tmp for good.
 */
final class ChildJvm {
    /** sqlite-jdbc's setting for where it unpacks its native library ({@code java.io.tmpdir} when unset). */
    static final String SQLITE_TMPDIR = "org.sqlite.tmpdir";

    /** The folder of a test's own directory that its children's SQLite libraries go to. */
    static Path sqliteDirIn(Path owned) {
        return owned.resolve("sqlite-native");
    }

    /**
     * {@code java OPTIONS -Dorg.sqlite.tmpdir=SQLITEDIR -cp CLASSPATH MAIN ARGS}; creates
     * {@code sqliteDir} (sqlite-jdbc does not, and could not unpack its library).
     */
    static List<String> command(Path sqliteDir, List<String> jvmOptions, Class<?> main, String... args)
            throws IOException {
        Files.createDirectories(sqliteDir);
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(jvmOptions);
        command.add("-D" + SQLITE_TMPDIR + "=" + sqliteDir.toAbsolutePath());
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName()));
        command.addAll(List.of(args));
        return command;
    }

    private ChildJvm() {
    }
}
