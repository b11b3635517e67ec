package dev.synapsehub.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code --log-level} sets the level of a real start (a fresh JVM through {@link Main#main}): logback
 * reads it once, when the first logger is made, so it must be chosen before anything logs or makes
 * a logger (Netty's leak detector does, first thing).
 */
class LogLevelOptionTest {

    /** Runs a start that logs its starting line and is then refused (the journal path is a directory). */
    private static String start(Path dir, String... options) throws Exception {
        List<String> args = new ArrayList<>(List.of("--port", "0", "--db", dir.toString()));
        args.addAll(List.of(options));
        List<String> command = ChildJvm.hub(ChildJvm.sqliteDirIn(dir), List.of(), args);
        Path out = Files.createTempFile(dir, "out", ".txt");
        Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile()).start();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("the start did not end in 120 s");
        }
        assertThat(p.exitValue()).isEqualTo(ExitCodes.DATA_ERROR);
        return Files.readString(out, StandardCharsets.UTF_8);
    }

    @Test
    void warnHidesTheStartingLineThatTheDefaultLevelShows(@TempDir Path dir) throws Exception {
        assertThat(start(dir)).contains(" INFO ").contains("starting:");
        String quiet = start(dir, "--log-level", "WARN");
        assertThat(quiet).doesNotContain(" INFO ").contains("is a directory");
    }
}
