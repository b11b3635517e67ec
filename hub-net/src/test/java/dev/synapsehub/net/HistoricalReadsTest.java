package dev.synapsehub.net;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/** Mailbox replay reads the journal on a reader thread of its own: a busy writer does not hold it up. */
class HistoricalReadsTest {

    @Test
    void aMailboxIsReplayedWhileTheWriterIsHeldUp(@TempDir Path dir) throws Exception {
        try (TestHub hub = TestHub.journaled(dir.resolve("hub.db"))) {
            HubClient alpha = hub.agent("p/alpha");
            ObjectNode chat = alpha.frame("chat");
            chat.put("target", "p/bob");
            chat.put("payload", "while you were away");
            alpha.send(chat);
            long seq = alpha.awaitType("chat", WAIT).path("seq").asLong();
            assertThat(seq).isPositive();

            CountDownLatch held = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            hub.actor.read(s -> {
                held.countDown();
                try {
                    return release.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            assertThat(held.await(5, TimeUnit.SECONDS)).isTrue();
            try {
                HubClient bob = hub.connect();
                ObjectNode hb = bob.frame("p/bob", "heartbeat");
                hb.put("mailbox", true);
                hb.put("since_seq", 0);
                bob.send(hb);
                ObjectNode replayed = bob.await(f -> f.path("replayed").asBoolean(), WAIT);
                assertThat(replayed.path("payload").asText()).isEqualTo("while you were away");
                assertThat(replayed.path("seq").asLong()).isEqualTo(seq);
                assertThat(hub.actor.queueDepth()).as("the writer is still held up").isPositive();
            } finally {
                release.countDown();
            }
        }
    }
}
