package dev.synapsehub.net;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.net.protocol.Outbox;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A registration with {@code mailbox: true} that comes while the hub is busy binds its name as
 * any registration and is not answered {@code busy}; its replay follows once the hub is no longer
 * busy, without the client asking again. The hub is made busy by holding its publishing (outbox)
 * thread with more tasks waiting than its busy threshold. The deferral is counted on {@code /metrics}.
 */
class MailboxRegistrationWhileBusyTest {

    @Test
    void aMailboxRegistrationWhileTheHubIsBusyIsReplayedOnceTheHubCanServeIt(@TempDir Path dir) throws Exception {
        try (TestHub hub = new TestHub(HubConfig.builder().outboxBusyTasks(1).metricsEnabled(true), dir.resolve("hub.db"),
                CoordinationState::new)) {
            HubClient alpha = hub.agent("p/alpha");
            ObjectNode chat = alpha.frame("chat");
            chat.put("target", "p/bob").put("payload", "while you were away");
            alpha.send(chat);
            long seq = alpha.awaitType("chat", WAIT).path("seq").asLong();

            Outbox outbox = hub.server.services().outbox();
            CountDownLatch held = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            outbox.executor().execute(() -> {
                held.countDown();
                try {
                    release.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            assertThat(held.await(5, TimeUnit.SECONDS)).isTrue();
            HubClient bob;
            try {
                outbox.executor().execute(() -> { });
                outbox.executor().execute(() -> { });
                assertThat(outbox.overloaded()).as("more tasks wait than the busy threshold").isTrue();
                bob = hub.connect();
                ObjectNode hb = bob.frame("p/bob", "heartbeat");
                hb.put("payload", "online").put("mailbox", true).put("since_seq", 0);
                bob.send(hb);
                // a query is refused busy whatever the fix: its answer shows the registration was read while busy
                bob.send(bob.frame("p/bob", "who_request"));
                bob.await(f -> "error".equals(f.path("type").asText()), WAIT);
                assertThat(hub.server.services().registry().isOnline("p/bob")).as("the registration bound").isTrue();
                assertThat(hub.server.services().metrics().mailboxReplaysWaiting.get())
                        .as("its replay is counted as waiting").isEqualTo(1);
            } finally {
                release.countDown();
            }
            ObjectNode replayed = bob.await(f -> f.path("replayed").asBoolean(), WAIT);
            assertThat(replayed.path("payload").asText()).isEqualTo("while you were away");
            assertThat(replayed.path("seq").asLong()).isEqualTo(seq);
            assertThat(bob.received().stream().filter(f -> "error".equals(f.path("type").asText())).toList())
                    .as("only the query was answered busy, not the registration").hasSize(1)
                    .allSatisfy(e -> assertThat(e.path("error_code").asText()).isEqualTo("busy"));
            String metrics = HttpGet.body(hub.port, "/metrics");
            assertThat(metrics).as("the deferral is on /metrics").contains("synapse_mailbox_replays_deferred_total 1\n")
                    .as("and no longer waiting").contains("synapse_mailbox_replays_deferred_waiting 0\n");
        }
    }
}
