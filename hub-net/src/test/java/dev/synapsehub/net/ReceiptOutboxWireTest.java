package dev.synapsehub.net;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.core.messaging.OwedReceipt;
import dev.synapsehub.net.session.Session;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.SingleThreadEventExecutor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The receipt notification outbox over a real socket (contract §8.5): a deferred receipt owed to
 * a sender that is offline when its recipient acks survives a restart of the journaled hub, is
 * sent on the sender's next registration before its presence update, and only once: neither a
 * later registration nor another restart sends it again.
 */
class ReceiptOutboxWireTest {
    @TempDir
    Path dir;

    /** Polls the core's outbox (a linearizable read through the writer) until it holds {@code n} receipts. */
    private static List<OwedReceipt> awaitOwed(TestHub hub, int n) throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (true) {
            List<OwedReceipt> owed = hub.actor.read(s -> s.messaging().owedReceipts()).get(5, TimeUnit.SECONDS);
            if (owed.size() == n) {
                return owed;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("owed receipts " + owed + ", expected " + n);
            }
            Thread.sleep(5);
        }
    }

    private static void awaitLeft(HubClient watcher, String name) throws Exception {
        watcher.await(f -> "presence_update".equals(f.path("type").asText()) && "left".equals(f.path("event").asText())
                && name.equals(f.path("agent").asText()), WAIT);
    }

    /** Registers {@code name}; its {@code received()} then holds every frame up to its own "joined", in order. */
    private static HubClient registerUntilJoined(TestHub hub, String name) throws Exception {
        HubClient c = hub.connect();
        c.register(name, null, WAIT);
        c.await(f -> "presence_update".equals(f.path("type").asText()) && name.equals(f.path("agent").asText())
                && "joined".equals(f.path("event").asText()), WAIT);
        return c;
    }

    private static long receipts(List<ObjectNode> frames) {
        return frames.stream().filter(f -> "delivery_receipt".equals(f.path("type").asText())).count();
    }

    @Test
    void aReceiptOwedToAnOfflineSenderSurvivesARestartAndArrivesOnceBeforeItsPresence() throws Exception {
        Path db = dir.resolve("hub.db");
        long seq;
        try (TestHub hub = TestHub.journaled(db)) {
            HubClient watcher = hub.agent("p/watch");
            HubClient a = hub.agent("p/alpha");
            ObjectNode chat = a.frame("chat");
            chat.put("target", "p/beta").put("payload", "while you were away").put("receipt_requested", true)
                    .put("client_msg_id", "m-1");
            a.send(chat);
            seq = a.awaitType("chat", WAIT).path("seq").asLong();
            assertThat(a.awaitType("delivery_receipt", WAIT).path("receipt_notification_id").asText())
                    .isEqualTo("delivery-receipt:" + seq + ":pending");
            a.close();
            awaitLeft(watcher, "p/alpha");

            HubClient b = hub.connect();
            ObjectNode hb = b.frame("p/beta", "heartbeat");
            hb.put("payload", "online").put("mailbox", true).put("since_seq", 0);
            b.send(hb);
            assertThat(b.await(f -> "chat".equals(f.path("type").asText()) && f.path("replayed").asBoolean(), WAIT)
                    .path("seq").asLong()).isEqualTo(seq);
            ObjectNode ack = b.frame("p/beta", "ack");
            ack.put("seq", seq);
            b.send(ack);
            List<OwedReceipt> owed = awaitOwed(hub, 1);
            assertThat(owed.get(0).sender()).isEqualTo("p/alpha");
            assertThat(owed.get(0).notificationId()).isEqualTo("delivery-receipt:" + seq + ":deferred");
        }

        try (TestHub hub = TestHub.journaled(db)) {
            assertThat(awaitOwed(hub, 1)).hasSize(1); // recovered from the journal
            HubClient watcher = hub.agent("p/watch");
            HubClient alpha = registerUntilJoined(hub, "p/alpha");
            List<ObjectNode> frames = alpha.received();
            int receiptAt = -1;
            int joinedAt = -1;
            for (int i = 0; i < frames.size(); i++) {
                ObjectNode f = frames.get(i);
                if ("delivery_receipt".equals(f.path("type").asText())) {
                    receiptAt = i;
                } else if ("presence_update".equals(f.path("type").asText())
                        && "p/alpha".equals(f.path("agent").asText())) {
                    joinedAt = i;
                }
            }
            assertThat(receipts(frames)).isEqualTo(1);
            assertThat(receiptAt).as("the owed receipt precedes the presence update").isBetween(0, joinedAt - 1);
            JsonNode r = frames.get(receiptAt);
            assertThat(r.path("receipt_notification_id").asText()).isEqualTo("delivery-receipt:" + seq + ":deferred");
            assertThat(r.path("target").asText()).isEqualTo("p/alpha");
            assertThat(r.path("message_seq").asLong()).isEqualTo(seq);
            assertThat(r.path("delivered").asBoolean()).isTrue();
            assertThat(r.path("deferred").asBoolean()).isTrue();
            assertThat(r.path("recipients").toString()).isEqualTo("[\"p/beta\"]");
            assertThat(r.path("client_msg_id").asText()).isEqualTo("m-1");
            awaitOwed(hub, 0); // settled by the registration
            alpha.close();
            awaitLeft(watcher, "p/alpha");
            assertThat(receipts(registerUntilJoined(hub, "p/alpha").received()))
                    .as("sent once: not again on the next registration").isZero();
        }

        try (TestHub hub = TestHub.journaled(db)) {
            assertThat(awaitOwed(hub, 0)).isEmpty();
            assertThat(receipts(registerUntilJoined(hub, "p/alpha").received()))
                    .as("sent once: not again after another restart").isZero();
        }
    }

    @Test
    void aReceiptForAnOnlineSenderIsSentAtOnceAndSettledAndASecondRegistrationGetsNothing() throws Exception {
        try (TestHub hub = TestHub.journaled(dir.resolve("online.db"))) {
            HubClient a = hub.agent("p/alpha");
            ObjectNode chat = a.frame("chat");
            chat.put("target", "p/beta").put("payload", "x").put("receipt_requested", true);
            a.send(chat);
            long seq = a.awaitType("chat", WAIT).path("seq").asLong();
            a.awaitType("delivery_receipt", WAIT);
            HubClient b = hub.agent("p/beta");
            ObjectNode ack = b.frame("p/beta", "ack");
            ack.put("seq", seq);
            b.send(ack);
            JsonNode d = a.await(f -> "delivery_receipt".equals(f.path("type").asText())
                    && f.path("deferred").asBoolean(), WAIT);
            assertThat(d.path("receipt_notification_id").asText()).isEqualTo("delivery-receipt:" + seq + ":deferred");
            awaitOwed(hub, 0);
            HubClient watcher = hub.agent("p/watch");
            a.close();
            awaitLeft(watcher, "p/alpha");
            assertThat(receipts(registerUntilJoined(hub, "p/alpha").received())).isZero();
        }
    }

    /**
     * A deferred receipt handed to its sender's socket just as that socket dies is not settled:
     * the write never reached the socket, so the receipt stays owed and the sender's next
     * registration gets it. The sender's I/O loop is held while the receipt's write is queued
     * behind it; the held task closes the socket, so the write finds it closed.
     */
    @Test
    void aReceiptWhoseWriteMeetsADeadSocketStaysOwedForTheNextRegistration() throws Exception {
        try (TestHub hub = new TestHub(HubConfig.builder().ioLoops(2), dir.resolve("dying.db"),
                dev.synapsehub.core.state.CoordinationState::new)) {
            HubClient watcher = hub.agent("p/watch");
            HubClient a = hub.agent("p/alpha");
            ObjectNode chat = a.frame("chat");
            chat.put("target", "p/beta").put("payload", "x").put("receipt_requested", true);
            a.send(chat);
            long seq = a.awaitType("chat", WAIT).path("seq").asLong();
            a.awaitType("delivery_receipt", WAIT); // pending: beta is offline
            Session alpha = hub.server.services().registry().session("p/alpha");
            EventLoop alphaLoop = alpha.channel().eventLoop();
            HubClient b = agentOnAnotherLoop(hub, watcher, "p/beta", alphaLoop);

            CountDownLatch held = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            alphaLoop.execute(() -> {
                held.countDown();
                try {
                    release.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                alpha.channel().close(); // the socket dies just before the receipt's write runs
            });
            assertThat(held.await(5, TimeUnit.SECONDS)).isTrue();
            try {
                ObjectNode ack = b.frame("p/beta", "ack");
                ack.put("seq", seq);
                b.send(ack);
                // the deferred receipt's write waits behind the held task on alpha's loop
                long deadline = System.nanoTime() + WAIT.toNanos();
                while (((SingleThreadEventExecutor) alphaLoop).pendingTasks() == 0) {
                    assertThat(System.nanoTime()).as("the receipt's write queued on alpha's loop").isLessThan(deadline);
                    Thread.sleep(5);
                }
            } finally {
                release.countDown();
            }
            awaitLeft(watcher, "p/alpha");
            assertThat(awaitOwed(hub, 1).get(0).notificationId()).as("not settled: it never reached a socket")
                    .isEqualTo("delivery-receipt:" + seq + ":deferred");

            HubClient again = registerUntilJoined(hub, "p/alpha");
            List<ObjectNode> frames = again.received();
            assertThat(receipts(frames)).as("the next registration gets it").isEqualTo(1);
            assertThat(frames.stream().filter(f -> "delivery_receipt".equals(f.path("type").asText())).findFirst()
                    .orElseThrow().path("receipt_notification_id").asText())
                    .isEqualTo("delivery-receipt:" + seq + ":deferred");
            awaitOwed(hub, 0); // settled once written
        }
    }

    /** Registers {@code name} on an I/O loop other than {@code not} (the hub hands connections to its loops in turn). */
    private static HubClient agentOnAnotherLoop(TestHub hub, HubClient watcher, String name, EventLoop not)
            throws Exception {
        for (int i = 0; i < 4; i++) {
            HubClient c = registerUntilJoined(hub, name);
            if (hub.server.services().registry().session(name).channel().eventLoop() != not) {
                return c;
            }
            c.close();
            awaitLeft(watcher, name);
        }
        throw new AssertionError(name + " never landed on another I/O loop");
    }
}
