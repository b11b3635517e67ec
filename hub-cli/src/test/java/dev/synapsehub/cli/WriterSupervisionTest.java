package dev.synapsehub.cli;

import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.journal.SqliteJournal;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.ConnectException;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A hub whose writer thread dies of an {@link Error} does not linger half alive: it shuts down
 * in order (port closed, journal closed and intact) and the command exits 70 for a service
 * manager to restart it.
 */
class WriterSupervisionTest {
    private final LoopbackHub hub = new LoopbackHub();

    @AfterEach
    void stop() throws Exception {
        hub.close();
    }

    /** Stands for any Error on the writer thread. */
    private static final class InjectedError extends Error {
        InjectedError() {
            super("injected for the test");
        }
    }

    @Test
    void anErrorOnTheWriterClosesTheHubInOrderAndExitsSeventy(@TempDir Path dir) throws Exception {
        Path db = dir.resolve("hub.db");
        HubDaemon daemon = hub.start("--port", "0", "--db", db.toString());
        assertThat(CliTest.run("claim", "T1", "--url", hub.url(), "--worktree", "a").code()).isEqualTo(ExitCodes.OK);
        CompletableFuture<Integer> exit = CompletableFuture.supplyAsync(() -> {
            try {
                return SynapseHubCommand.serveUntilStopped(daemon, Duration.ofSeconds(15));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        assertThat(exit).isNotDone(); // serving

        daemon.actor().read(s -> {
            throw new InjectedError(); // runs on the writer thread
        });

        assertThat(exit.get(20, TimeUnit.SECONDS)).isEqualTo(ExitCodes.SOFTWARE);
        assertThat(daemon.writerFailure()).isCompletedWithValueMatching(InjectedError.class::isInstance);
        assertThatThrownBy(() -> new Socket("127.0.0.1", daemon.port()).close()).isInstanceOf(ConnectException.class);
        // the journal was closed (its exclusive lock is free) and holds what was committed before
        try (SqliteJournal journal = SqliteJournal.open(db)) {
            CoordinationState state = new CoordinationState();
            state.replay(journal, System.currentTimeMillis() / 1000.0, n -> { });
            assertThat(state.claims().liveCount()).isEqualTo(1);
        }
    }
}
