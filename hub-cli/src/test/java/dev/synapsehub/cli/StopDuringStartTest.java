package dev.synapsehub.cli;

import dev.synapsehub.journal.SqliteJournal;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.net.ConnectException;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A SIGTERM that comes while the hub starts: the shutdown hook is registered before the start
 * ({@link StopSignal}), a single hub whose start sees the request binds no server and closes its
 * journal cleanly (a mesh node as well, while it waits for its cluster), and a hub that was already
 * bound is closed by the hook once it is handed over.
 */
class StopDuringStartTest {

    private static SynapseHubCommand parsed(String... args) {
        SynapseHubCommand command = new SynapseHubCommand();
        new CommandLine(command).parseArgs(args);
        return command;
    }

    private static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    /** Starts with a stop already requested: the hub it started anyway (closed again), or null. */
    private static HubDaemon startWithStopRequested(SynapseHubCommand command) throws Exception {
        HubDaemon started = null;
        try {
            started = HubDaemon.start(command.serve, command.federation, () -> true);
        } catch (HubDaemon.StoppedBeforeServing expected) {
            // the start stopped before binding
        } finally {
            if (started != null) {
                started.close();
            }
        }
        return started;
    }

    @Test
    void aStopRequestedDuringTheStartBindsNoServerAndClosesTheJournal(@TempDir Path dir) throws Exception {
        Path db = dir.resolve("hub.db");
        int port = freePort();
        SynapseHubCommand command = parsed("--port", Integer.toString(port), "--db", db.toString());
        HubDaemon started = startWithStopRequested(command);
        assertThat(started).as("no hub was started").isNull();
        assertThatThrownBy(() -> new Socket("127.0.0.1", port).close()).isInstanceOf(ConnectException.class);
        try (SqliteJournal journal = SqliteJournal.open(db)) { // its exclusive lock is free: closed
            assertThat(journal.lastSeq()).isZero();
        }
    }

    @Test
    void aStopRequestedDuringAMeshNodesStartBindsNoServerAndClosesItsJournalCopy(@TempDir Path dir) throws Exception {
        Path db = dir.resolve("n1.db");
        int port = freePort();
        int raft = freePort();
        // one voter of three alone finds no leader: without the stop it would wait its whole catch-up time
        SynapseHubCommand command = parsed("--port", Integer.toString(port), "--db", db.toString(), "--mesh-id", "n1",
                "--mesh-peers", "n1=127.0.0.1:" + raft + ",n2=127.0.0.1:" + freePort() + ",n3=127.0.0.1:" + freePort(),
                "--mesh-bootstrap");
        HubDaemon started = startWithStopRequested(command);
        assertThat(started).as("no mesh node was started").isNull();
        assertThatThrownBy(() -> new Socket("127.0.0.1", port).close()).isInstanceOf(ConnectException.class);
        try (ServerSocket again = new ServerSocket(raft, 1, java.net.InetAddress.getLoopbackAddress())) {
            assertThat(again.getLocalPort()).as("the Raft node's port was released").isEqualTo(raft);
        }
        assertThat(dir.resolve("n1.db-wal")).as("the journal copy was closed").doesNotExist();
        // stopped while its empty storage made it ask its peers (MeshStart), before any Raft storage was opened
        assertThat(dir.resolve("n1.db.raft")).as("no Raft storage was written").doesNotExist();
        try (SqliteJournal journal = SqliteJournal.open(db)) {
            assertThat(journal.lastSeq()).isZero();
        }
    }

    @Test
    void aSignalAfterTheBindClosesTheHubOnceItIsHandedOver(@TempDir Path dir) throws Exception {
        Path db = dir.resolve("hub.db");
        SynapseHubCommand command = parsed("--port", "0", "--db", db.toString());
        StopSignal stop = new StopSignal();
        HubDaemon daemon = HubDaemon.start(command.serve, command.federation, stop::requested);
        try {
            // the signal lands between the bind and the hand-over: the hook waits for the hub
            CompletableFuture<Void> hook = CompletableFuture.runAsync(stop::onSignal);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!stop.requested()) {
                assertThat(System.nanoTime()).as("the hook ran").isLessThan(deadline);
                Thread.sleep(5);
            }
            assertThat(hook).as("waiting for the hub").isNotDone();
            new Socket("127.0.0.1", daemon.port()).close(); // still serving

            stop.started(daemon);
            hook.get(30, TimeUnit.SECONDS);
            assertThat(stop.closed()).isDone();
            assertThatThrownBy(() -> new Socket("127.0.0.1", daemon.port()).close()).isInstanceOf(ConnectException.class);
            try (SqliteJournal journal = SqliteJournal.open(db)) {
                assertThat(journal.lastSeq()).isZero();
            }
        } finally {
            daemon.close();
        }
    }
}
