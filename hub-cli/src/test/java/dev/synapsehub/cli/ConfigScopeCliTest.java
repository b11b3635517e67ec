package dev.synapsehub.cli;

import dev.synapsehub.journal.SqliteJournal;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A {@code --config} file sets the hub start's options; a subcommand reads only the keys qualified
 * with its name, and never a required option: the file's {@code db} (the production journal) must
 * not become the {@code --db} an operator forgot on {@code import} or {@code journal backup}.
 */
class ConfigScopeCliTest {
    @TempDir
    Path dir;

    @Test
    void theHubsDbKeyNeverFillsTheDbASubcommandRequires() throws Exception {
        Path production = dir.resolve("prod").resolve("hub.db");
        Files.createDirectories(production.getParent());
        try (SqliteJournal journal = SqliteJournal.open(production)) {
            journal.lastSeq(); // a journal as a hub leaves it
        }
        double t = System.currentTimeMillis() / 1000.0;
        Path old = dir.resolve("old.db");
        try (ReferenceDb db = new ReferenceDb(old)) {
            db.event(t, "claim", ReferenceDb.claim("a", "proj/x", 3, 0, t, t + 600, ""));
        }
        Path config = dir.resolve("synapse-hub.properties");
        Files.writeString(config, "port=0\ndb=" + production + "\n");
        List<String> before = listing(production.getParent());
        String digest = sha256(production);

        CliTest.Run imported = CliTest.run("--config", config.toString(), "import", "--from", old.toString(),
                "--replace-existing");
        assertThat(imported.code()).as(imported.out() + imported.err()).isEqualTo(ExitCodes.USAGE);
        assertThat(imported.err()).contains("--db");

        Path copy = dir.resolve("copy.db");
        CliTest.Run backup = CliTest.run("--config", config.toString(), "journal", "backup", "--to", copy.toString());
        assertThat(backup.code()).as(backup.out() + backup.err()).isEqualTo(ExitCodes.USAGE);
        assertThat(backup.err()).contains("--db");
        assertThat(copy).doesNotExist();

        CliTest.Run inspect = CliTest.run("--config", config.toString(), "journal", "inspect");
        assertThat(inspect.code()).as(inspect.out() + inspect.err()).isEqualTo(ExitCodes.USAGE);
        assertThat(inspect.err()).contains("--db");

        assertThat(sha256(production)).as("the journal the file names is untouched").isEqualTo(digest);
        assertThat(listing(production.getParent())).as("nothing moved aside or created beside it").isEqualTo(before);
    }

    @Test
    void theNoteForAPlainKeySaysWhetherTheHubStartReadsIt() throws Exception {
        Path config = Files.writeString(dir.resolve("notes.properties"), "token=abc\ntimeout=99\n");
        CliTest.Run who = CliTest.run("--config", config.toString(), "who", "--url", "ws://127.0.0.1:9");
        assertThat(who.err()).contains("'token' sets the hub start's option, not who's --token")
                .contains("'timeout' is not read as who's --timeout (a key for who is qualified: synapse-hub.who.timeout)")
                .doesNotContain("'timeout' sets the hub start's option");
    }

    @Test
    void aSubcommandReadsOnlyTheKeysQualifiedWithItsName() throws Exception {
        Path config = dir.resolve("shared.properties");
        // rate: frames/s per connection for the hub, claims/s for bench; timeout: who's wait
        Files.writeString(config, "port=0\nrate=7\ntimeout=99\nsynapse-hub.state.timeout=42\n");
        String file = config.toString();

        SynapseHubCommand hub = CliTest.parsed("--config", file);
        assertThat(hub.serve.hubConfig().port()).as("the hub start reads the unqualified keys").isZero();

        assertThat(client(subcommand("--config", file, "who")).timeoutSeconds)
                .as("an unqualified key is the hub start's").isEqualTo(10.0);
        assertThat(client(subcommand("--config", file, "state")).timeoutSeconds)
                .as("a key qualified with the command's name is its own").isEqualTo(42.0);
        BenchCommand bench = subcommand("--config", file, "bench");
        assertThat(bench.rate).as("bench's claims/s are not the hub's frames/s").isNotEqualTo(7.0);
    }

    @Test
    void aKeyForARequiredOptionOfASubcommandIsRefused() throws Exception {
        Path config = dir.resolve("import.properties");
        Files.writeString(config, "port=0\nsynapse-hub.import.db=" + dir.resolve("hub.db") + "\n");
        for (String[] args : List.of(new String[] {"--config", config.toString()},
                new String[] {"--config", config.toString(), "import", "--from", "x.db"})) {
            assertThatThrownBy(() -> SynapseHubCommand.commandLine(args))
                    .isInstanceOf(CommandLine.PicocliException.class)
                    .hasMessageContaining(config.toString())
                    .hasMessageContaining("synapse-hub.import.db")
                    .hasMessageContaining("required");
        }
    }

    @Test
    void aSubcommandSaysWhichOfItsOptionsTheFilesUnqualifiedKeysNoLongerSet() throws Exception {
        Path config = dir.resolve("shared.properties");
        Files.writeString(config, "port=0\ntimeout=5\n");
        CliTest.Run who = CliTest.run("--config", config.toString(), "who", "--url", "ws://127.0.0.1:1");
        assertThat(who.code()).as(who.err()).isEqualTo(ExitCodes.UNAVAILABLE);
        assertThat(who.err()).contains("'timeout'").contains("synapse-hub.who.timeout");
        assertThat(who.err()).as("an option the command line gave is not in question").doesNotContain("'url'");
    }

    @SuppressWarnings("unchecked")
    private static <T> T subcommand(String... args) {
        CommandLine cl = SynapseHubCommand.commandLine(args);
        CommandLine.ParseResult parsed = cl.parseArgs(args);
        while (parsed.hasSubcommand()) {
            parsed = parsed.subcommand();
        }
        return (T) parsed.commandSpec().userObject();
    }

    private static ClientOptions client(OperatorCommands.Base command) {
        return command.client;
    }

    private static List<String> listing(Path directory) throws Exception {
        try (Stream<Path> files = Files.list(directory)) {
            return files.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    private static String sha256(Path file) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
    }
}
