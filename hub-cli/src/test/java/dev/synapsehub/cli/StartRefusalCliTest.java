package dev.synapsehub.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** A hub start refused for its setup says what is wrong and what to do, with the documented exit code. */
class StartRefusalCliTest {

    @Test
    void aJournalInAMissingDirectoryNamesTheDirectory(@TempDir Path dir) {
        Path missing = dir.resolve("nodir");
        CliTest.Run start = CliTest.run("--port", "0", "--db", missing.resolve("hub.db").toString());
        assertThat(start.code()).as(start.err()).isEqualTo(ExitCodes.DATA_ERROR);
        assertThat(start.err()).contains("the directory " + missing.toAbsolutePath() + " does not exist")
                .contains("mkdir -p");
        assertThat(Files.exists(missing)).as("nothing is created for a refused start").isFalse();
    }
}
