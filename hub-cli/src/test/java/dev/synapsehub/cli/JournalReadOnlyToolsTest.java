package dev.synapsehub.cli;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;

import static dev.synapsehub.cli.ReferenceDb.claim;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code journal inspect|verify} and an offline {@code journal backup} only read: an empty file,
 * another hub's database or a running hub's journal is reported as what it is and left as it was.
 */
class JournalReadOnlyToolsTest {
    @TempDir
    Path dir;

    private final LoopbackHub hub = new LoopbackHub();

    @AfterEach
    void stop() throws Exception {
        hub.close();
    }

    private static String sha256(Path file) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
    }

    @Test
    void anEmptyFileIsRefusedByEveryToolAndStaysEmpty() throws Exception {
        Path empty = Files.createFile(dir.resolve("empty.db"));
        for (String tool : new String[] {"verify", "inspect"}) {
            CliTest.Run run = CliTest.run("journal", tool, "--db", empty.toString());
            assertThat(run.code()).as(tool + ": " + run.out()).isEqualTo(ExitCodes.DATA_ERROR);
            assertThat(run.err()).contains("an empty file (0 bytes), not a journal");
        }
        CliTest.Run backup = CliTest.run("journal", "backup", "--db", empty.toString(), "--to",
                dir.resolve("b.db").toString());
        assertThat(backup.code()).isEqualTo(ExitCodes.DATA_ERROR);
        assertThat(Files.size(empty)).isZero();
        try (var files = Files.list(dir)) {
            assertThat(files).as("no schema, sidecar, lock file or backup").containsExactly(empty);
        }
    }

    @Test
    void anotherHubsDatabaseIsNamedLeftAsItWasAndStillImports() throws Exception {
        double t = System.currentTimeMillis() / 1000.0;
        Path other = dir.resolve("other.db");
        try (ReferenceDb db = new ReferenceDb(other)) {
            db.event(t, "claim", claim("a", "proj/x", 3, 0, t, t + 600, ""));
        }
        String before = sha256(other);
        for (String tool : new String[] {"inspect", "verify"}) {
            CliTest.Run run = CliTest.run("journal", tool, "--db", other.toString());
            assertThat(run.code()).as(tool).isEqualTo(ExitCodes.DATA_ERROR);
            assertThat(run.err()).contains("another wire-v2 hub's database").contains("synapse-hub import --from");
        }
        assertThat(sha256(other)).as("not migrated").isEqualTo(before);
        CliTest.Run imported = CliTest.run("import", "--from", other.toString(), "--db", dir.resolve("hub.db").toString());
        assertThat(imported.code()).as(imported.err()).isEqualTo(ExitCodes.OK);
    }

    @Test
    void aRunningHubsJournalIsReadWithANoteAndNoLockFileIsCreatedOtherwise() throws Exception {
        Path db = dir.resolve("hub.db");
        hub.start("--port", "0", "--db", db.toString());
        assertThat(CliTest.run("claim", "T1", "--url", hub.url()).code()).isEqualTo(ExitCodes.OK);
        CliTest.Run verify = CliTest.run("journal", "verify", "--db", db.toString());
        assertThat(verify.code()).as(verify.err()).isEqualTo(ExitCodes.OK);
        assertThat(verify.err()).contains("note: a hub is running on").contains("as of seq 1");
        CliTest.Run inspect = CliTest.run("journal", "inspect", "--db", db.toString());
        assertThat(inspect.code()).as(inspect.err()).isEqualTo(ExitCodes.OK);
        assertThat(inspect.out()).contains("live claims    1");
        assertThat(CliTest.run("claim", "T2", "--url", hub.url()).code()).as("the hub kept serving").isEqualTo(ExitCodes.OK);
        hub.close();

        Path copy = dir.resolve("copy.db");
        assertThat(CliTest.run("journal", "backup", "--db", db.toString(), "--to", copy.toString()).code())
                .isEqualTo(ExitCodes.OK);
        String before = sha256(copy);
        CliTest.Run offline = CliTest.run("journal", "verify", "--db", copy.toString());
        assertThat(offline.code()).as(offline.err()).isEqualTo(ExitCodes.OK);
        assertThat(offline.err()).doesNotContain("note:");
        assertThat(offline.out()).contains("2 live claims");
        assertThat(sha256(copy)).isEqualTo(before);
        assertThat(dir.resolve("copy.db-lock")).as("a read-only tool creates no lock file").doesNotExist();
        assertThat(dir.resolve("copy.db-wal")).doesNotExist();
    }
}
