package dev.synapsehub.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.synapsehub.journal.SqliteJournal;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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

    @Test
    void aPortInUseIsAConfigurationErrorAndLeavesTheJournalUnlocked(@TempDir Path dir) throws Exception {
        try (LoopbackHub first = new LoopbackHub()) {
            int port = first.start("--port", "0", "--db", dir.resolve("hub1.db").toString()).port();
            Path second = dir.resolve("hub2.db");
            CliTest.Run start = CliTest.run("--port", String.valueOf(port), "--db", second.toString());
            assertThat(start.code()).as(start.err()).isEqualTo(ExitCodes.USAGE);
            assertThat(start.err()).contains("cannot listen on 127.0.0.1:" + port + ": address already in use")
                    .contains("--port").doesNotContain("internal error");
            try (SqliteJournal reopened = SqliteJournal.open(second)) {
                assertThat(reopened.lastSeq()).as("the refused start closed its journal").isZero();
            }
        }
    }

    @Test
    void anUnknownKeyInTheConfigFileStopsTheStartAndNamesTheOptionItProbablyMeant(@TempDir Path dir) throws Exception {
        Path config = dir.resolve("hub.properties");
        Files.writeString(config, "port=0\nmax-claim-per-agent=5\n");
        String[] args = {"--config", config.toString()};
        assertThatThrownBy(() -> SynapseHubCommand.commandLine(args))
                .hasMessageContaining(config.toString())
                .hasMessageContaining("unknown key 'max-claim-per-agent' (did you mean max-claims-per-agent?)");
        assertThat(Main.run(args)).as("as the same typo as a flag").isEqualTo(ExitCodes.USAGE);
        String[] who = {"--config", config.toString(), "who"};
        assertThatThrownBy(() -> SynapseHubCommand.commandLine(who)).as("a subcommand's start is checked too")
                .hasMessageContaining("unknown key 'max-claim-per-agent'");
    }

    @Test
    void keysOfSubcommandsAndTheShippedExampleAreKnown(@TempDir Path dir) throws Exception {
        Path config = dir.resolve("shared.properties");
        // one file for the hub and the operator commands: url is read by who, not by the hub
        Files.writeString(config, "port=0\nurl=ws://127.0.0.1:1\nsynapse-hub.who.timeout=1\n");
        assertThatCode(() -> SynapseHubCommand.commandLine(new String[] {"--config", config.toString()}))
                .doesNotThrowAnyException();
        Path example = Path.of("..", "config", "synapse-hub.properties");
        assertThatCode(() -> SynapseHubCommand.commandLine(new String[] {"--config", example.toString()}))
                .doesNotThrowAnyException();
    }

    /** Main.run as the launcher runs it, its standard error captured. */
    private static CliTest.Run main(String... args) {
        java.io.PrintStream saved = System.err;
        java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
        System.setErr(new java.io.PrintStream(err, true, java.nio.charset.StandardCharsets.UTF_8));
        try {
            int code = Main.run(args);
            return new CliTest.Run(code, "", err.toString(java.nio.charset.StandardCharsets.UTF_8));
        } finally {
            System.setErr(saved);
        }
    }

    @Test
    void aMistypedFlagIsToldInAFewLinesWithTheNearestOptionAndWhereTheOthersAre() {
        CliTest.Run hub = main("--dbb", "hub.db");
        assertThat(hub.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(hub.err()).startsWith("synapse-hub: Unknown option").contains("--db")
                .contains("Run 'synapse-hub --help' for its options.");
        assertThat(hub.err().lines().count()).as(hub.err()).isLessThan(10);
        CliTest.Run sub = main("journal", "verify", "--dbb", "x.db");
        assertThat(sub.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(sub.err()).contains("Run 'synapse-hub journal verify --help' for its options.");
        assertThat(sub.err().lines().count()).as(sub.err()).isLessThan(10);
    }
}
