package dev.synapsehub.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The command line of a hub that a test starts as a child JVM on this module's test class path,
 * with SQLite's native library unpacked into a directory the test owns. sqlite-jdbc otherwise
 * copies its ~1 MB library into {@code java.io.tmpdir} at every start and removes it only on a
 * normal exit, so each hub a test killed with SIGKILL left one in /tmp for good. (A hub started
 * by {@code bin/synapse-hub} loads the launcher's own unpacked copy and needs none of this.)
 */
final class ChildJvm {
    /** sqlite-jdbc's setting for where it unpacks its native library ({@code java.io.tmpdir} when unset). */
    static final String SQLITE_TMPDIR = "org.sqlite.tmpdir";

    /** The folder of a test's own directory that its children's SQLite libraries go to. */
    static Path sqliteDirIn(Path owned) {
        return owned.resolve("sqlite-native");
    }

    /**
     * {@code java OPTIONS -Dorg.sqlite.tmpdir=SQLITEDIR -cp CLASSPATH Main ARGS}; creates
     * {@code sqliteDir} (sqlite-jdbc does not, and could not unpack its library).
     */
    static List<String> hub(Path sqliteDir, List<String> jvmOptions, List<String> args) throws IOException {
        Files.createDirectories(sqliteDir);
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(jvmOptions);
        command.add("-D" + SQLITE_TMPDIR + "=" + sqliteDir.toAbsolutePath());
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), Main.class.getName()));
        command.addAll(args);
        return command;
    }

    private ChildJvm() {
    }
}
