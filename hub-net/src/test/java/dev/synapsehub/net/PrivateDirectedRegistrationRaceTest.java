package dev.synapsehub.net;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.core.state.CoordinationState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * With {@code --private-directed-messages}, a directed chat to an agent that registers while the
 * chat is being decided reaches it: its recipients were resolved before the agent bound, and its
 * mailbox replay read the journal before the chat committed, so only the live fan-out can carry
 * it. The interleaving is forced: the writer is held while the chat waits for it, the agent
 * registers and gets its replay meanwhile, then the writer commits the chat.
 */
class PrivateDirectedRegistrationRaceTest {

    @Test
    void aDirectedChatDecidedWhileItsRecipientRegistersReachesItLive(@TempDir Path dir) throws Exception {
        try (TestHub hub = new TestHub(HubConfig.builder().privateDirectedMessages(true), dir.resolve("hub.db"),
                CoordinationState::new)) {
            HubClient alpha = hub.agent("p/alpha");
            alpha.send(chat(alpha, "before"));
            long before = alpha.awaitType("chat", WAIT).path("seq").asLong();

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
            HubClient bob;
            try {
                alpha.send(chat(alpha, "racing"));
                // the chat was read (its recipients resolved) and submitted: it waits for the held writer (an
                // error for a later frame no longer shows that, as it now waits for the chat's answer too)
                long deadline = System.nanoTime() + WAIT.toNanos();
                while (hub.actor.queueDepth() == 0 && System.nanoTime() < deadline) {
                    Thread.sleep(1);
                }
                assertThat(hub.actor.queueDepth()).as("the racing chat waits for the writer").isPositive();

                bob = hub.connect();
                ObjectNode hb = bob.frame("p/bob", "heartbeat");
                hb.put("payload", "online").put("mailbox", true).put("since_seq", 0);
                bob.send(hb);
                ObjectNode replayed = bob.await(f -> f.path("replayed").asBoolean(), WAIT);
                assertThat(replayed.path("seq").asLong()).as("the replay read the journal as it was").isEqualTo(before);
                assertThat(hub.actor.queueDepth()).as("the racing chat still waits for the writer").isPositive();
            } finally {
                release.countDown();
            }
            ObjectNode racing = bob.await(f -> "chat".equals(f.path("type").asText())
                    && "racing".equals(f.path("payload").asText()), WAIT);
            assertThat(racing.path("replayed").asBoolean()).as("delivered live").isFalse();
            assertThat(racing.path("seq").asLong()).isGreaterThan(before);
        }
    }

    private static ObjectNode chat(HubClient from, String payload) {
        ObjectNode f = from.frame("chat");
        f.put("target", "p/bob").put("payload", payload);
        return f;
    }
}
