package dev.synapsehub.journal;

import dev.synapsehub.core.actor.ActorSettings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * The control socket's client gives up on a hub that stays silent (a stopped process still has
 * its socket accept connections into the backlog), but waits as long as a working hub says it
 * is working.
 */
class JournalControlTest {
    @TempDir
    Path dir;

    private final Fixtures.ManualClock clock = new Fixtures.ManualClock(1_700_000_000);

    @Test
    void aHubThatNeverAnswersTimesTheClientOut() throws Exception {
        Path db = dir.resolve("hub.db");
        // what a SIGSTOPped hub looks like from outside: the kernel queues the connection, nobody reads
        try (ServerSocketChannel frozen = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            frozen.bind(UnixDomainSocketAddress.of(JournalControl.socketPath(db)));
            assertTimeoutPreemptively(Duration.ofSeconds(30), () ->
                    assertThatThrownBy(() -> JournalControl.request(db, "backup " + dir.resolve("b.db"), 500))
                            .isInstanceOf(JournalControl.NoAnswerException.class)
                            .hasMessageContaining("stayed silent for more than 0.5 s")
                            .hasMessageContaining("stopped (SIGSTOP)"));
        }
        assertThat(dir.resolve("b.db")).doesNotExist();
    }

    @Test
    void aHubBusyLongerThanTheTimeoutKeepsTheClientWaitingWithItsHeartbeat() throws Exception {
        Path db = dir.resolve("hub.db");
        Path copy = dir.resolve("copy.db");
        Retention retention = new Retention(100);
        try (DurableCoordination hub = DurableCoordination.open(db, clock, SnapshotEquivalenceTest::smallState,
                ActorSettings.DEFAULTS, new SnapshotPolicy(0, 0, 2, false), retention)) {
            Fixtures.await(hub.actor().submit(Fixtures.claimOf("alice", "t1")));
            JournalControl control = JournalControl.start(hub.journal(), hub.actor(), retention, 100).orElseThrow();
            try {
                CountDownLatch release = new CountDownLatch(1);
                CountDownLatch holding = new CountDownLatch(1);
                // the writer is busy for 10 client timeouts: the backup's first writer turn waits behind this
                CompletableFuture<Boolean> busy = hub.actor().upkeep(s -> {
                    holding.countDown();
                    try {
                        return release.await(30, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return false;
                    }
                });
                assertThat(holding.await(10, TimeUnit.SECONDS)).isTrue();
                CompletableFuture<Optional<String>> reply = CompletableFuture.supplyAsync(() -> {
                    try {
                        return JournalControl.request(db, "backup " + copy, 1_000);
                    } catch (java.io.IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                });
                Thread.sleep(3_000); // three client timeouts with the hub's writer busy
                assertThat(reply).as("still waiting on a working hub").isNotDone();
                release.countDown();
                assertThat(busy.get(10, TimeUnit.SECONDS)).isTrue();
                Optional<String> answer = reply.get(30, TimeUnit.SECONDS);
                assertThat(answer).hasValueSatisfying(a -> assertThat(a).startsWith("ok ").contains("consistent at seq 1"));
            } finally {
                control.close();
            }
        }
        assertThat(Files.exists(copy)).isTrue();
    }

    @Test
    void aSocketThisUserMayNotUseIsSaidSoNotTakenForAStaleOne() throws Exception {
        Path db = dir.resolve("hub.db");
        try (ServerSocketChannel hub = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            hub.bind(UnixDomainSocketAddress.of(JournalControl.socketPath(db)));
            // what JDK 17 throws connecting to another user's 0600 socket (EACCES; tests run as root here,
            // whom the mode does not stop)
            JournalControl.Connector denied = (channel, address) -> {
                throw new java.net.BindException("Permission denied");
            };
            assertThatThrownBy(() -> JournalControl.request(db, "backup " + dir.resolve("b.db"), 5_000, denied))
                    .isInstanceOf(JournalControl.UnusableSocketException.class)
                    .hasMessageContaining("cannot use the control socket " + JournalControl.socketPath(db))
                    .hasMessageContaining("Permission denied")
                    .hasMessageContaining("mode 0600").hasMessageContaining("run this as the user the hub runs as");

            JournalControl.Connector refused = (channel, address) -> {
                throw new java.net.ConnectException("Connection refused");
            };
            assertThat(JournalControl.request(db, "backup " + dir.resolve("b.db"), 5_000, refused))
                    .as("nobody listens: a socket a killed hub left").isEmpty();
        }
        JournalControl.Connector gone = (channel, address) -> {
            throw new java.net.SocketException("No such file or directory");
        };
        Files.deleteIfExists(JournalControl.socketPath(db)); // closing the server leaves its socket file
        Files.createFile(JournalControl.socketPath(db));
        assertThat(JournalControl.request(db, "backup " + dir.resolve("b.db"), 5_000, (channel, address) -> {
            Files.delete(JournalControl.socketPath(db)); // the hub stopped between the look and the connect
            return gone.connect(channel, address);
        })).isEmpty();
        assertThat(dir.resolve("b.db")).doesNotExist();
    }
}
