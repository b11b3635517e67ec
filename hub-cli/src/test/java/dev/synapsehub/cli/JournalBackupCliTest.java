package dev.synapsehub.cli;

import dev.synapsehub.journal.JournalControl;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code journal backup} against a running hub (through its control socket, while it serves) and
 * against a stopped one; the copy is a journal a hub starts from.
 */
class JournalBackupCliTest {
    @TempDir
    Path dir;

    private final LoopbackHub hub = new LoopbackHub();

    @AfterEach
    void stop() throws Exception {
        hub.close();
    }

    @Test
    void onlineThroughTheRunningHubThenOfflineAndBothRestore() throws Exception {
        Path db = dir.resolve("hub.db");
        hub.start("--port", "0", "--db", db.toString());
        assertThat(Files.exists(JournalControl.socketPath(db))).as("the control socket beside the journal").isTrue();
        assertThat(CliTest.run("claim", "T1", "--url", hub.url()).code()).isEqualTo(ExitCodes.OK);

        Path online = dir.resolve("online.db");
        CliTest.Run backup = CliTest.run("journal", "backup", "--db", db.toString(), "--to", online.toString());
        assertThat(backup.code()).as(backup.err()).isEqualTo(ExitCodes.OK);
        assertThat(backup.out()).startsWith("online backup written by the hub process (the path as it sees it) to "
                + online.toAbsolutePath().normalize() + ": ").contains("consistent at seq 1");
        assertThat(CliTest.run("claim", "T2", "--url", hub.url()).code()).as("the hub kept serving").isEqualTo(ExitCodes.OK);
        CliTest.Run again = CliTest.run("journal", "backup", "--db", db.toString(), "--to", online.toString());
        assertThat(again.code()).as("an existing target is a usage error").isEqualTo(ExitCodes.USAGE);
        assertThat(again.err()).contains("refused the target").contains("never overwrites");
        hub.close();
        CliTest.Run offlineAgain = CliTest.run("journal", "backup", "--db", db.toString(), "--to", online.toString());
        assertThat(offlineAgain.code()).as("offline too").isEqualTo(ExitCodes.USAGE);
        assertThat(offlineAgain.err()).contains("never overwrites");
        assertThat(Files.exists(JournalControl.socketPath(db))).as("removed at stop").isFalse();

        Path offline = dir.resolve("offline.db");
        CliTest.Run off = CliTest.run("journal", "backup", "--db", db.toString(), "--to", offline.toString());
        assertThat(off.code()).as(off.err()).isEqualTo(ExitCodes.OK);
        assertThat(off.out()).startsWith("offline backup ");
        assertThat(CliTest.run("journal", "verify", "--db", online.toString()).code()).isEqualTo(ExitCodes.OK);
        assertThat(CliTest.run("journal", "verify", "--db", offline.toString()).code()).isEqualTo(ExitCodes.OK);

        hub.start("--port", "0", "--db", online.toString());
        assertThat(CliTest.run("state", "--url", hub.url()).out()).contains("1 live claim(s)").contains("T1")
                .doesNotContain("T2");
        hub.close();
        hub.start("--port", "0", "--db", offline.toString());
        assertThat(CliTest.run("state", "--url", hub.url()).out()).contains("2 live claim(s)");
    }

    @Test
    void aTargetDirectoryThatRefusesANewFileIsAUsageErrorSayingWhy() throws Exception {
        Path db = dir.resolve("hub.db");
        // /proc takes no new file, whoever asks (root passes permission bits, not this)
        Path target = Path.of("/proc", "synapse-backup-test.db");
        hub.start("--port", "0", "--db", db.toString());
        CliTest.Run online = CliTest.run("journal", "backup", "--db", db.toString(), "--to", target.toString());
        assertThat(online.code()).as(online.out() + online.err()).isEqualTo(ExitCodes.USAGE);
        assertThat(online.err()).contains("refused the target").contains("cannot create a file in /proc");
        hub.close();
        CliTest.Run offline = CliTest.run("journal", "backup", "--db", db.toString(), "--to", target.toString());
        assertThat(offline.code()).as(offline.out() + offline.err()).isEqualTo(ExitCodes.USAGE);
        assertThat(offline.err()).contains(target + ": cannot create a file in /proc: ").contains("Nothing was written");
    }

    @Test
    void aStaleControlSocketFromAKilledHubFallsBackToOffline() throws Exception {
        Path db = dir.resolve("hub.db");
        hub.start("--port", "0", "--db", db.toString());
        hub.close();
        Files.createFile(JournalControl.socketPath(db)); // what a SIGKILL leaves: a file nobody listens on
        CliTest.Run off = CliTest.run("journal", "backup", "--db", db.toString(), "--to", dir.resolve("b.db").toString());
        assertThat(off.code()).as(off.err()).isEqualTo(ExitCodes.OK);
        assertThat(off.out()).startsWith("offline backup ");
    }

    @Test
    void aHubThatStaysSilentIsGivenUpOnWithExitThree() throws Exception {
        Path db = dir.resolve("hub.db");
        // a SIGSTOPped hub: its socket still takes connections into the backlog, nobody answers
        try (java.nio.channels.ServerSocketChannel frozen = java.nio.channels.ServerSocketChannel.open(
                java.net.StandardProtocolFamily.UNIX)) {
            frozen.bind(java.net.UnixDomainSocketAddress.of(JournalControl.socketPath(db)));
            CliTest.Run run = org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(java.time.Duration.ofSeconds(60),
                    () -> CliTest.run("journal", "backup", "--db", db.toString(), "--to", dir.resolve("b.db").toString(),
                            "--timeout", "3"));
            assertThat(run.code()).as(run.err()).isEqualTo(ExitCodes.UNAVAILABLE);
            assertThat(run.err()).contains("stayed silent for more than 3.0 s").contains("stopped (SIGSTOP)");
        }
        assertThat(CliTest.run("journal", "backup", "--db", db.toString(), "--to", dir.resolve("c.db").toString(),
                "--timeout", "1").code()).as("a timeout shorter than the hub's heartbeat").isEqualTo(ExitCodes.USAGE);
    }

    @Test
    void aBackupTheHubWroteWhereThisProcessCannotSeeItIsNotASuccess() throws Exception {
        Path db = dir.resolve("hub.db");
        Path target = dir.resolve("private-tmp.db"); // the hub says it wrote it; here there is no such file
        try (java.nio.channels.ServerSocketChannel hubInAnotherView = java.nio.channels.ServerSocketChannel.open(
                java.net.StandardProtocolFamily.UNIX)) {
            hubInAnotherView.bind(java.net.UnixDomainSocketAddress.of(JournalControl.socketPath(db)));
            Thread answering = new Thread(() -> {
                try (java.nio.channels.SocketChannel c = hubInAnotherView.accept()) {
                    java.nio.ByteBuffer in = java.nio.ByteBuffer.allocate(8192);
                    while (c.read(in) > 0 && in.get(in.position() - 1) != '\n') {
                        // bounded by the client's one request line
                    }
                    c.write(java.nio.ByteBuffer.wrap(("ok " + target + ": consistent at seq 1; 1 rows and 0 snapshot(s),"
                            + " 8,192 bytes in 0.01 s\n").getBytes(java.nio.charset.StandardCharsets.UTF_8)));
                } catch (java.io.IOException ignored) {
                    // the assertions below say what went wrong
                }
            });
            answering.start();
            CliTest.Run run = CliTest.run("journal", "backup", "--db", db.toString(), "--to", target.toString());
            answering.join(30_000);
            assertThat(run.code()).as(run.out() + run.err()).isEqualTo(ExitCodes.USAGE);
            assertThat(run.out()).startsWith("online backup written by the hub process");
            assertThat(run.err()).contains("this process does not see a file there").contains("PrivateTmp");
        }
    }

    @Test
    void aRunningHubThatDoesNotTakeTheBackupIsExitThreeNotAnInvalidJournal() throws Exception {
        Path db = dir.resolve("hub.db");
        hub.start("--port", "0", "--db", db.toString());
        // what a hub that could not bind its control socket looks like (a path too long, no Unix sockets)
        Files.delete(JournalControl.socketPath(db));
        Path target = dir.resolve("b.db");
        CliTest.Run run = CliTest.run("journal", "backup", "--db", db.toString(), "--to", target.toString());
        assertThat(run.code()).as(run.err()).isEqualTo(ExitCodes.UNAVAILABLE);
        assertThat(run.err()).contains("is open in a running hub").contains("see its start-up log")
                .contains("Nothing was written");
        assertThat(target).doesNotExist();
    }

    @Test
    void aRunningMeshNodeIsToldToBeStoppedForABackup() throws Exception {
        Path db = dir.resolve("n1.db");
        int raft = HubProcess.freePort(); // below the ephemeral range: no outgoing socket takes it meanwhile
        hub.start("--port", "0", "--db", db.toString(), "--mesh-id", "n1", "--mesh-peers", "n1=127.0.0.1:" + raft);
        assertThat(JournalControl.socketPath(db)).as("a mesh node opens no control socket").doesNotExist();
        Path target = dir.resolve("b.db");
        CliTest.Run run = CliTest.run("journal", "backup", "--db", db.toString(), "--to", target.toString());
        assertThat(run.code()).as(run.err()).isEqualTo(ExitCodes.UNAVAILABLE);
        assertThat(run.err()).contains("running mesh node").contains("no online backup").contains("Stop the node")
                .doesNotContain("start-up log");
        assertThat(target).doesNotExist();
    }
}
