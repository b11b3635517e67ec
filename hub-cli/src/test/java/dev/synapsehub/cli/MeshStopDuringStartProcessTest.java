package dev.synapsehub.cli;

import dev.synapsehub.journal.SqliteJournal;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.net.ConnectException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A SIGTERM to a mesh node process while it is still starting: one voter of three started
 * alone finds no leader, so it would wait its whole catch-up time before binding its agents'
 * port. The signal stops it there: it binds nothing, closes its Raft node and journal copy
 * (SQLite's WAL file is gone, as only a clean close leaves it), logs why, and exits with
 * SIGTERM's status, rather than the shutdown hook giving up on a start still running.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class MeshStopDuringStartProcessTest {
    /** Generous: a JVM start on two loaded cores. */
    private static final Duration WAIT = Duration.ofSeconds(120);

    @TempDir
    Path dir;

    @Test
    void aSigtermWhileTheNodeWaitsForItsClusterStopsItBeforeItBinds() throws Exception {
        int port = HubProcess.freePort();
        String peers = "n1=127.0.0.1:" + HubProcess.freePort() + ",n2=127.0.0.1:" + HubProcess.freePort()
                + ",n3=127.0.0.1:" + HubProcess.freePort();
        Path db = dir.resolve("n1.db");
        Path log = dir.resolve("n1.log");
        try (HubProcess n1 = new HubProcess("n1", port, log,
                List.of("--db", db.toString(), "--mesh-id", "n1", "--mesh-peers", peers, "--mesh-bootstrap"))) {
            n1.start();
            // the Raft node runs; the agents' port waits for a leader the other two voters would elect
            n1.awaitLog("mesh node n1 started: raft", WAIT);

            int code = n1.terminate();

            String written = Files.readString(log, StandardCharsets.UTF_8);
            assertThat(code).as(written).isEqualTo(143); // the JVM's status for SIGTERM, its hooks run
            assertThat(written).contains("stopping before serving: a signal came during the mesh node's start")
                    .doesNotContain("listening on ws://")
                    .doesNotContain("stopping during the start (still restoring");
        }
        assertThatThrownBy(() -> new Socket("127.0.0.1", port).close()).isInstanceOf(ConnectException.class);
        assertThat(dir.resolve("n1.db-wal")).as("the journal copy was closed, not abandoned").doesNotExist();
        try (SqliteJournal journal = SqliteJournal.open(db)) {
            assertThat(journal.lastSeq()).isZero();
        }
    }
}
