package dev.synapsehub.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * Options that cannot take effect in the configuration given are not silently ignored: on the
 * command line the start is refused (exit 2, naming what each needs); from a --config file (which
 * may be a copy of the example serving another hub) the start warns once.
 */
class InertOptionsCliTest {
    @TempDir
    Path dir;

    /** A start with ARGS, bounded: a start that is not refused would serve until stopped. */
    private static CliTest.Run refusedStart(String... args) {
        return assertTimeoutPreemptively(Duration.ofSeconds(30), () -> CliTest.run(args));
    }

    @Test
    void meshOptionsWithoutAMeshIdAreRefused() {
        String[][] meshOnly = {{"--mesh-group", "11111111-2222-3333-4444-555555555555"},
                {"--mesh-commit-timeout", "2"}, {"--mesh-snapshot-every", "50"}};
        for (String[] option : meshOnly) {
            CliTest.Run run = refusedStart("--port", "0", option[0], option[1]);
            assertThat(run.code()).as(option[0]).isEqualTo(ExitCodes.USAGE);
            assertThat(run.err()).as(option[0]).contains(option[0] + " needs --mesh-id");
        }
    }

    @Test
    void journalOptionsWithoutADbAreRefusedAllNamedInOneMessage() {
        CliTest.Run run = refusedStart("--port", "0", "--snapshot-interval", "60", "--journal-keep-rows", "1000");
        assertThat(run.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(run.err()).contains("--snapshot-interval, --journal-keep-rows need --db");
        for (String[] option : new String[][] {{"--snapshot-every-rows", "10"}, {"--snapshots-kept", "3"},
                {"--no-shutdown-snapshot"}, {"--compact-hint-threshold", "5"}}) {
            String[] args = new String[option.length + 2];
            args[0] = "--port";
            args[1] = "0";
            System.arraycopy(option, 0, args, 2, option.length);
            assertThatThrownBy(() -> CliTest.parsed(args).serve.inertOptionWarnings()).as(option[0])
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(option[0] + " needs --db");
        }
    }

    @Test
    void retentionThatNoSnapshotEverRunsIsRefused() {
        Path db = dir.resolve("hub.db");
        CliTest.Run run = refusedStart("--port", "0", "--db", db.toString(), "--journal-keep-rows", "100",
                "--snapshot-interval", "0", "--snapshot-every-rows", "0", "--no-shutdown-snapshot");
        assertThat(run.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(run.err()).contains("--journal-keep-rows 100 needs a snapshot");
        assertThat(db).as("refused before the journal is created").doesNotExist();
        // any one trigger lets retention run; keeping every row needs none
        assertThat(CliTest.parsed("--db", db.toString(), "--journal-keep-rows", "100", "--snapshot-interval", "0",
                "--snapshot-every-rows", "0").serve.inertOptionWarnings()).isEmpty();
        assertThat(CliTest.parsed("--db", db.toString(), "--snapshot-interval", "0", "--snapshot-every-rows", "0",
                "--no-shutdown-snapshot").serve.inertOptionWarnings()).isEmpty();
    }

    @Test
    void retentionWithOneSnapshotKeptWarnsThatNothingIsLeftToFallBackOn() {
        Path db = dir.resolve("hub.db");
        assertThat(CliTest.parsed("--db", db.toString(), "--journal-keep-rows", "0", "--snapshots-kept", "1")
                .serve.inertOptionWarnings()).singleElement().asString()
                .startsWith("--journal-keep-rows 0 with --snapshots-kept 1: retention deletes the rows the one snapshot"
                        + " covers, so nothing is left to fall back on");
        assertThat(CliTest.parsed("--db", db.toString(), "--snapshots-kept", "1").serve.inertOptionWarnings())
                .as("keeping every row").isEmpty();
        assertThat(CliTest.parsed("--db", db.toString(), "--journal-keep-rows", "0").serve.inertOptionWarnings())
                .as("two snapshots kept").isEmpty();
    }

    @Test
    void theSameKeysInAConfigFileStartWithOneWarningEach() throws Exception {
        Path file = Files.writeString(dir.resolve("hub.properties"), String.join("\n",
                "snapshot-interval=300", "snapshots-kept=2", "no-shutdown-snapshot=false", "journal-keep-rows=all",
                "mesh-commit-timeout=5.0", ""));
        ServeOptions serve = CliTest.parsed("--config", file.toString(), "--port", "0").serve;
        assertThat(serve.inertOptionWarnings()).containsExactly(
                "the --config file sets mesh-commit-timeout, which take effect only with --mesh-id (they configure a "
                        + "mesh node); ignored",
                "the --config file sets snapshot-interval, snapshots-kept, journal-keep-rows, which take effect only "
                        + "with --db (without it nothing is journaled, snapshotted or retained); ignored");
        assertThat(CliTest.parsed("--config", file.toString(), "--db", dir.resolve("a.db").toString(),
                "--mesh-id", "n1", "--mesh-peers", "n1=127.0.0.1:1").serve.inertOptionWarnings())
                .as("with --db and --mesh-id they apply").isEmpty();
    }

    @Test
    void theShippedExampleStartsWithoutAWarning() {
        SynapseHubCommand command = CliTest.parsed("--config", Path.of("..", "config", "synapse-hub.properties").toString());
        assertThat(command.serve.inertOptionWarnings()).isEmpty();
    }

    @Test
    void aHubStartedWithTheOptionsItNeedsIsNotRefused() throws Exception {
        try (LoopbackHub hub = new LoopbackHub()) {
            hub.start("--port", "0", "--db", dir.resolve("hub.db").toString(), "--snapshot-interval", "60",
                    "--journal-keep-rows", "1000", "--compact-hint-threshold", "5");
        }
    }
}
