package dev.synapsehub.net;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.core.messaging.MessagingLimits;
import dev.synapsehub.core.board.BoardLimits;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.core.claim.RegistryLimits;
import dev.synapsehub.core.resource.ResourceLimits;
import dev.synapsehub.journal.DurableCoordination;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Nothing acknowledged is lost at a mailbox replay: a replay or an ack the hub cannot serve at
 * once (its journal reader's queue is full) is retried by the hub instead of answered with an
 * error no client acts on, and a backlog beyond the contract's 1,000-row scan window is replayed
 * whole.
 */
class MailboxReplayCompletenessTest {
    @TempDir
    Path dir;

    /** A journaled hub over {@code db} whose journal reader can be held up. */
    private record Gated(TestHub hub, GatedJournal journal) {
    }

    private Gated gated(Supplier<CoordinationState> fresh) throws Exception {
        DurableCoordination durable = DurableCoordination.open(dir.resolve("hub.db"), Clock.system(), fresh,
                ActorSettings.DEFAULTS);
        GatedJournal journal = new GatedJournal(durable.journal());
        TestHub hub = new TestHub(HubConfig.builder().metricsEnabled(true), durable.actor(), Clock.system(), journal);
        return new Gated(hub, journal);
    }

    /** Holds the reader on one read and fills its queue until a read is refused; returns the reads. */
    private static List<CompletableFuture<List<JournaledEvent>>> fillReader(Gated g) throws InterruptedException {
        g.journal().hold();
        List<CompletableFuture<List<JournaledEvent>>> reads = new ArrayList<>();
        reads.add(g.hub().server.history().readAfter(0, 1, Set.of("chat")));
        assertThat(g.journal().awaitHeld()).as("the reader is held").isTrue();
        for (int i = 0; i < 5000; i++) {
            CompletableFuture<List<JournaledEvent>> read = g.hub().server.history().readAfter(0, 1, Set.of("chat"));
            reads.add(read);
            if (read.isCompletedExceptionally()) {
                return reads; // the queue is full
            }
        }
        throw new AssertionError("the reader's queue never filled");
    }

    private static List<ObjectNode> errors(HubClient c) {
        return c.received().stream().filter(f -> "error".equals(f.path("type").asText())).toList();
    }

    @Test
    void aReplayRefusedByAFullReaderIsRetriedNotAnsweredWithAnError() throws Exception {
        Gated g = gated(CoordinationState::new);
        try (TestHub hub = g.hub()) {
            HubClient alpha = hub.agent("p/alpha");
            alpha.send(alpha.frame("chat").put("target", "p/bob").put("payload", "while you were away"));
            long seq = alpha.awaitType("chat", WAIT).path("seq").asLong();

            fillReader(g);
            HubClient bob;
            try {
                bob = hub.connect();
                ObjectNode hb = bob.frame("p/bob", "heartbeat");
                hb.put("mailbox", true).put("since_seq", 0);
                bob.send(hb);
                bob.awaitType("presence_update", WAIT);
                // a query after the registration: its answer follows the replay's turn on this connection
                bob.send(bob.frame("p/bob", "who_request"));
                bob.awaitType("who_snapshot", WAIT);
            } finally {
                g.journal().release();
            }
            ObjectNode replayed = bob.await(f -> f.path("replayed").asBoolean(), WAIT);
            assertThat(replayed.path("payload").asText()).isEqualTo("while you were away");
            assertThat(replayed.path("seq").asLong()).isEqualTo(seq);
            assertThat(errors(bob)).as("the registration is not answered busy").isEmpty();
            assertThat(hub.server.services().metrics().mailboxReplaysDeferred.get())
                    .as("the refused replay was counted as deferred").isPositive();
        }
    }

    @Test
    void anAckRefusedByAFullReaderIsRetriedAndItsDeferredReceiptDelivered() throws Exception {
        // a history of one: the acked chat is no longer in memory, so the ack reads the journal
        Gated g = gated(() -> new CoordinationState(RegistryLimits.DEFAULTS, 1000, BoardLimits.DEFAULTS,
                ResourceLimits.DEFAULTS, MessagingLimits.DEFAULTS.withMaxHistory(1)));
        try (TestHub hub = g.hub()) {
            HubClient alpha = hub.agent("p/alpha");
            alpha.send(alpha.frame("chat").put("target", "p/bob").put("payload", "ack me")
                    .put("receipt_requested", true));
            long seq = alpha.awaitType("chat", WAIT).path("seq").asLong();
            ObjectNode immediate = alpha.awaitType("delivery_receipt", WAIT);
            assertThat(immediate.path("delivered").asBoolean()).isFalse();
            alpha.send(alpha.frame("chat").put("target", "p/carol").put("payload", "pushes the first out"));
            alpha.await(f -> "chat".equals(f.path("type").asText())
                    && "pushes the first out".equals(f.path("payload").asText()), WAIT);
            HubClient bob = hub.agent("p/bob");

            fillReader(g);
            try {
                bob.send(bob.frame("ack").put("seq", seq));
                bob.send(bob.frame("who_request"));
                bob.awaitType("who_snapshot", WAIT); // the ack was handled before it
            } finally {
                g.journal().release();
            }
            ObjectNode deferred = alpha.await(f -> "delivery_receipt".equals(f.path("type").asText())
                    && f.path("deferred").asBoolean(), WAIT);
            assertThat(deferred.path("delivered").asBoolean()).isTrue();
            assertThat(deferred.path("message_seq").asLong()).isEqualTo(seq);
            assertThat(errors(bob)).as("an ack is never answered (§5.3)").isEmpty();
        }
    }

    @Test
    void aDirectedChatBeyondTheFirstThousandChatRowsIsReplayed() throws Exception {
        try (TestHub hub = TestHub.journaled(dir.resolve("hub.db"))) {
            HubClient alpha = hub.agent("p/alpha");
            alpha.send(alpha.frame("chat").put("target", "p/bob").put("payload", "early"));
            long early = alpha.awaitType("chat", WAIT).path("seq").asLong();
            for (int i = 0; i < 1500; i++) {
                alpha.send(alpha.frame("chat").put("payload", "noise " + i));
            }
            alpha.send(alpha.frame("chat").put("target", "p/bob").put("payload", "late"));
            for (int i = 0; i < 10; i++) {
                alpha.send(alpha.frame("chat").put("payload", "more noise " + i));
            }
            alpha.send(alpha.frame("chat").put("target", "p/bob").put("payload", "later")
                    .put("receipt_requested", true));
            long later = alpha.await(f -> "later".equals(f.path("payload").asText()), WAIT).path("seq").asLong();
            alpha.send(alpha.frame("who_request"));
            assertThat(alpha.awaitType("who_snapshot", WAIT).path("mailbox_pending").path("p/bob").asInt())
                    .isEqualTo(3);

            HubClient bob = hub.connect();
            ObjectNode hb = bob.frame("p/bob", "heartbeat");
            hb.put("mailbox", true).put("since_seq", 0);
            bob.send(hb);
            List<ObjectNode> replayed = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                replayed.add(bob.await(f -> f.path("replayed").asBoolean(), WAIT));
            }
            assertThat(replayed).extracting(f -> f.path("payload").asText())
                    .as("the whole backlog, in seq order").containsExactly("early", "late", "later");
            assertThat(replayed.get(0).path("seq").asLong()).isEqualTo(early);
            assertThat(replayed.get(2).path("seq").asLong()).isEqualTo(later);
            assertThat(replayed.get(1).path("seq").asLong()).isBetween(early, later);
            assertThat(replayed.get(2).path("sender").asText()).isEqualTo("p/alpha");
            assertThat(replayed.get(2).has("receipt_requested")).isFalse();
            bob.send(bob.frame("p/bob", "who_request")); // answered after the replay, on this connection
            bob.awaitType("who_snapshot", WAIT);
            assertThat(bob.received().stream().filter(f -> f.path("replayed").asBoolean()))
                    .as("each pending chat once, and no broadcast").hasSize(3);
        }
    }
}
