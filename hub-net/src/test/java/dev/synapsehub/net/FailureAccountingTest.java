package dev.synapsehub.net;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.event.ChatEvent;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.journal.InMemoryJournal;
import dev.synapsehub.core.journal.Journal;
import dev.synapsehub.core.journal.JournalException;
import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.net.protocol.HubMetrics;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every asynchronous failure on the way to a reply is logged once, counted and answered: the
 * client is never left waiting, and a journal that cannot be read never looks like an empty one
 * (a mailbox replay or an ack, which no client retries and which is never answered, is retried
 * by the hub instead).
 */
class FailureAccountingTest {

    /** What the journal's historical read does. */
    @FunctionalInterface
    private interface HistoricalRead {
        List<JournaledEvent> readAfter(long afterSeq) throws JournalException;
    }

    /** An in-memory journal whose historical reads go through {@code read}. */
    private static Journal journal(HistoricalRead read) {
        return journal(read, new InMemoryJournal());
    }

    /** {@code memory}, whose historical reads go through {@code read}. */
    private static Journal journal(HistoricalRead read, Journal memory) {
        return new Journal() {
            @Override
            public List<JournaledEvent> append(List<CoordinationEvent> batch) throws JournalException {
                return memory.append(batch);
            }

            @Override
            public void replay(Consumer<JournaledEvent> sink) {
            }

            @Override
            public List<JournaledEvent> readAfter(long afterSeq, int limit, Set<String> kinds) throws JournalException {
                return read.readAfter(afterSeq);
            }

            @Override
            public long lastSeq() {
                return memory.lastSeq();
            }

            @Override
            public void close() {
            }
        };
    }

    private static TestHub hubOver(Journal journal, ActorSettings settings) throws Exception {
        return hubOver(journal, settings, Clock.system());
    }

    /** A hub whose edge reads {@code edgeClock}. */
    private static TestHub hubOver(Journal journal, ActorSettings settings, Clock edgeClock) throws Exception {
        CoordinationActor actor = new CoordinationActor(new CoordinationState(), journal, Clock.system(), settings);
        actor.start();
        return new TestHub(HubConfig.builder().metricsEnabled(true), actor, edgeClock, journal);
    }

    /** A journal that keeps its chats in memory, whose historical reads fail while {@code failing} holds. */
    private static Journal failingWhile(AtomicBoolean failing) {
        List<JournaledEvent> chats = new java.util.concurrent.CopyOnWriteArrayList<>();
        InMemoryJournal numbering = new InMemoryJournal();
        Journal kept = new Journal() {
            @Override
            public List<JournaledEvent> append(List<CoordinationEvent> batch) {
                List<JournaledEvent> committed = numbering.append(batch);
                committed.stream().filter(e -> e.event() instanceof ChatEvent).forEach(chats::add);
                return committed;
            }

            @Override
            public void replay(Consumer<JournaledEvent> sink) {
            }

            @Override
            public List<JournaledEvent> readAfter(long afterSeq, int limit, Set<String> kinds) {
                return chats.stream().filter(e -> e.seq() > afterSeq).limit(limit).toList();
            }

            @Override
            public long lastSeq() {
                return numbering.lastSeq();
            }

            @Override
            public void close() {
            }
        };
        return journal(after -> {
            if (failing.get()) {
                throw new JournalException("injected: disk I/O error");
            }
            return kept.readAfter(after, 1000, Set.of("chat"));
        }, kept);
    }

    /** Waits (bounded) until {@code counter} reaches {@code at}. */
    private static void awaitAtLeast(java.util.function.LongSupplier counter, long at, String what)
            throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (counter.getAsLong() < at && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertThat(counter.getAsLong()).as(what).isGreaterThanOrEqualTo(at);
    }

    private static ObjectNode mailboxHeartbeat(HubClient c) {
        ObjectNode hb = c.frame("heartbeat");
        hb.put("mailbox", true);
        hb.put("since_seq", 0);
        return hb;
    }

    private static long faults(TestHub hub) {
        return hub.server.services().metrics().faults.get();
    }

    @Test
    void aMailboxReplayWhoseJournalCannotBeReadIsCountedAndRetriedNotAnEmptyReplayNorAnError() throws Exception {
        try (TestHub hub = hubOver(journal(after -> {
            throw new JournalException("injected: disk I/O error");
        }), ActorSettings.DEFAULTS)) {
            HubClient a = hub.agent("p/alpha");
            a.send(mailboxHeartbeat(a));
            TestHub.state(a); // answered after the replay's turn on this connection: its read had failed by then
            assertThat(faults(hub)).as("the failed read is counted as a fault").isPositive();
            assertThat(hub.server.services().metrics().mailboxReplaysDeferred.get())
                    .as("and the replay waits to be retried, for its client never asks again").isPositive();
            assertThat(a.received()).as("no reply a client would not act on").noneMatch(f -> isError(f))
                    .as("and no replay of nothing").noneMatch(f -> f.path("replayed").asBoolean());
            assertThat(a.isOpen()).isTrue();
        }
    }

    @Test
    void aReplayWhoseJournalKeepsFailingIsReportedOnceAndASecondMailboxHeartbeatAddsNoSecondReplay()
            throws Exception {
        AtomicBoolean failing = new AtomicBoolean(true);
        try (TestHub hub = hubOver(failingWhile(failing), ActorSettings.DEFAULTS)) {
            HubMetrics metrics = hub.server.services().metrics();
            HubClient alpha = hub.agent("p/alpha");
            ObjectNode chat = alpha.frame("chat");
            chat.put("target", "p/bob").put("payload", "while you were away");
            alpha.send(chat);
            alpha.awaitType("chat", WAIT);

            HubClient bob = hub.connect();
            ObjectNode registration = bob.frame("p/bob", "heartbeat");
            registration.put("mailbox", true).put("since_seq", 0);
            bob.send(registration);
            awaitAtLeast(metrics.mailboxReplaysDeferred::get, 3, "the replay was tried again, and failed again");
            assertThat(faults(hub)).as("one journal failure reported for the whole wait, not one per attempt")
                    .isEqualTo(1);

            ObjectNode again = bob.frame("p/bob", "heartbeat");
            again.put("mailbox", true).put("since_seq", 0);
            bob.send(again); // while the first replay waits: it adds no second one
            long deferred = metrics.mailboxReplaysDeferred.get();
            awaitAtLeast(metrics.mailboxReplaysDeferred::get, deferred + 2, "the one replay is still retried");
            assertThat(faults(hub)).as("still one report").isEqualTo(1);

            failing.set(false);
            ObjectNode replayed = bob.await(f -> f.path("replayed").asBoolean(), WAIT);
            assertThat(replayed.path("payload").asText()).isEqualTo("while you were away");
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (metrics.mailboxReplaysWaiting.get() > 0 && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertThat(metrics.mailboxReplaysWaiting.get()).as("no replay waits any more").isZero();
            bob.send(bob.frame("p/bob", "who_request")); // answered after any replay still on its way
            bob.awaitType("who_snapshot", WAIT);
            assertThat(bob.received().stream().filter(f -> f.path("replayed").asBoolean()))
                    .as("the backlog replayed once, not once per mailbox heartbeat").hasSize(1);
            assertThat(bob.received()).noneMatch(FailureAccountingTest::isError);
        }
    }

    /**
     * Never given up: a client told so may meanwhile have acked a live chat, whose cumulative ack
     * moved the watermark past the backlog, and its next registration would never replay it.
     */
    @Test
    void aReplayWhoseJournalFailsForLongIsStillRetriedAndDeliveredOnceReadsRecover() throws Exception {
        AtomicBoolean failing = new AtomicBoolean(true);
        AtomicLong stepMillis = new AtomicLong();
        Clock edge = () -> System.currentTimeMillis() / 1000.0 + stepMillis.get() / 1000.0;
        try (TestHub hub = hubOver(failingWhile(failing), ActorSettings.DEFAULTS, edge)) {
            HubMetrics metrics = hub.server.services().metrics();
            HubClient alpha = hub.agent("p/alpha");
            ObjectNode chat = alpha.frame("chat");
            chat.put("target", "p/bob").put("payload", "while you were away");
            alpha.send(chat);
            alpha.awaitType("chat", WAIT);

            HubClient bob = hub.connect();
            ObjectNode registration = bob.frame("p/bob", "heartbeat");
            registration.put("mailbox", true).put("since_seq", 0);
            bob.send(registration);
            awaitAtLeast(metrics.mailboxReplaysDeferred::get, 2, "the replay is retried");

            stepMillis.set(TimeUnit.MINUTES.toMillis(10)); // far past any bound a give-up could have had
            long deferred = metrics.mailboxReplaysDeferred.get();
            awaitAtLeast(metrics.mailboxReplaysDeferred::get, deferred + 2, "still retried, 10 min of hub time on");
            assertThat(bob.received()).as("not answered while it is retried").noneMatch(FailureAccountingTest::isError);
            assertThat(faults(hub)).as("the failure was counted once for the whole wait").isEqualTo(1);

            failing.set(false);
            ObjectNode replayed = bob.await(f -> f.path("replayed").asBoolean(), WAIT);
            assertThat(replayed.path("payload").asText()).isEqualTo("while you were away");
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (metrics.mailboxReplaysWaiting.get() > 0 && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertThat(metrics.mailboxReplaysWaiting.get()).as("nothing waits any more").isZero();
            bob.send(bob.frame("p/bob", "who_request")); // answered after any replay still on its way
            bob.awaitType("who_snapshot", WAIT);
            assertThat(bob.received().stream().filter(f -> f.path("replayed").asBoolean()))
                    .as("delivered exactly once").hasSize(1);
            assertThat(bob.received()).as("and no error frame").noneMatch(FailureAccountingTest::isError);
            assertThat(bob.isOpen()).isTrue();
        }
    }

    @Test
    void anAckWhoseJournalCannotBeReadIsCountedAndRetriedNeverAnswered() throws Exception {
        try (TestHub hub = hubOver(journal(after -> {
            throw new JournalException("injected: disk I/O error");
        }), ActorSettings.DEFAULTS)) {
            HubClient a = hub.agent("p/alpha");
            ObjectNode ack = a.frame("ack");
            ack.put("seq", 41);
            a.send(ack); // resolving an unknown seq reads the journal
            // the failed lookup is reported by the ack's retry, off the connection's answer order
            awaitAtLeast(() -> faults(hub), 1, "the failed read is counted as a fault");
            awaitAtLeast(() -> hub.server.services().metrics().unansweredRefusals.get(), 1,
                    "the ack waits to be tried again");
            TestHub.state(a); // a later request is still answered on this connection
            assertThat(a.received()).as("an ack is never answered (§5.3)").noneMatch(f -> isError(f));
            assertThat(a.isOpen()).isTrue();
        }
    }

    private static boolean isError(JsonNode f) {
        return "error".equals(f.path("type").asText());
    }

    @Test
    void aFaultInAReadIsLoggedCountedAndAnsweredInternalFaultAnd1011() throws Exception {
        try (TestHub hub = hubOver(journal(after -> {
            throw new IllegalStateException("injected fault");
        }), ActorSettings.DEFAULTS)) {
            HubClient a = hub.agent("p/alpha");
            a.send(mailboxHeartbeat(a));
            ObjectNode e = a.awaitType("error", WAIT);
            assertThat(e.path("error_code").asText()).isEqualTo("internal_fault");
            assertThat(a.awaitClose(WAIT).code()).isEqualTo(1011);
            assertThat(faults(hub)).isEqualTo(1);
        }
    }

    @Test
    void readsTheWriterRefusesAreAnsweredWithTheRealReasonNotBusy() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient a = hub.agent("p/alpha");
            hub.actor.read(s -> {
                throw new InjectedError();
            });
            for (String query : List.of("state_request", "board_request", "history_request", "resume_request",
                    "wait_request")) {
                a.send(a.frame(query));
                assertThat(a.awaitType("error", WAIT).path("error_code").asText()).as(query).isEqualTo("writer_failed");
            }
            assertThat(a.isOpen()).isTrue();
        }
    }

    @Test
    void aBackgroundSubmissionRefusedBusyIsCountedAndRetriedOnTheNextFrame() throws Exception {
        try (TestHub hub = hubOver(new InMemoryJournal(), new ActorSettings(2, 1024, 200))) {
            HubClient a = hub.agent("p/alpha");
            ObjectNode chat = a.frame("chat");
            chat.put("target", "p/bob");
            chat.put("payload", "for bob, who is away");
            a.send(chat);
            a.awaitType("chat", WAIT);
            assertThat(TestHub.state(a).path("snapshot").path("dead_letters")).hasSize(1);

            CountDownLatch stuck = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            hub.actor.read(s -> {
                stuck.countDown();
                return await(release);
            });
            assertThat(stuck.await(5, TimeUnit.SECONDS)).isTrue();
            hub.actor.read(s -> 0); // fill the queue of two
            hub.actor.read(s -> 0);
            HubClient bob = hub.agent("p/bob"); // binding submits the dead-letter clearing: refused busy
            assertThat(hub.server.services().metrics().unansweredRefusals.get()).isEqualTo(1);
            release.countDown();
            awaitCaughtUp(hub.actor);

            assertThat(TestHub.state(a).path("snapshot").path("dead_letters")).as("not cleared: it was refused")
                    .hasSize(1);
            bob.send(bob.frame("who_request")); // bob's next frame retries it
            bob.awaitType("who_snapshot", WAIT);
            assertThat(TestHub.state(a).path("snapshot").path("dead_letters")).isEmpty();
        }
    }

    @Test
    void anOutboxThatFallsBehindMakesNewRequestsBusyAndEveryRequestIsAnsweredOnce() throws Exception {
        try (TestHub hub = new TestHub(HubConfig.builder().outboxBusyTasks(4))) {
            HubClient a = hub.agent("p/alpha");
            a.clearPending();
            CountDownLatch release = new CountDownLatch(1);
            hub.server.services().outbox().executor().execute(() -> await(release)); // the outbox thread stalls
            int sent = 40;
            int first = 5; // more than the busy threshold of 4
            for (int i = 0; i < first; i++) {
                a.send(a.frame("state_request"));
            }
            // the answers to those wait behind the stalled outbox thread; only then is the edge behind
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (hub.server.services().outbox().queuedTasks() < first && a.pending().isEmpty() && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            // at least the threshold: on a loaded machine the fifth may already be answered busy at the edge
            // (the count below takes every busy answer, that one included)
            assertThat(hub.server.services().outbox().queuedTasks()).isGreaterThanOrEqualTo(first - 1);
            for (int i = first; i < sent; i++) {
                a.send(a.frame("state_request"));
            }
            // the edge refuses busy on the connection's own loop while the outbox is stalled; the busy
            // answers themselves go back after the answers to the earlier requests (request order)
            HubMetrics metrics = hub.server.services().metrics();
            deadline = System.nanoTime() + WAIT.toNanos();
            while (metrics.fanoutBusyRefusals.get() == 0 && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            assertThat(metrics.fanoutBusyRefusals.get()).as("refused busy while stalled").isPositive();
            assertThat(hub.server.services().outbox().queuedTasks())
                    .isLessThanOrEqualTo(hub.server.config().outboxQueueCapacity());
            release.countDown();
            List<ObjectNode> answers = new ArrayList<>();
            while (answers.size() < sent) {
                answers.add(a.await(x -> "state_snapshot".equals(x.path("type").asText())
                        || "error".equals(x.path("type").asText()), WAIT));
            }
            assertThat(answers.get(0).path("type").asText()).as("the first request's answer comes first")
                    .isEqualTo("state_snapshot");
            assertThat(answers).filteredOn(f -> "error".equals(f.path("type").asText()))
                    .allSatisfy(e -> assertThat(e.path("error_code").asText()).isEqualTo("busy"));
            TestHub.assertQuiet(a); // and nothing more: each request got exactly one answer
            assertThat(metrics.fanoutBusyRefusals.get())
                    .isEqualTo(answers.stream().filter(f -> "error".equals(f.path("type").asText())).count());
        }
    }

    @Test
    void aBroadcastSharedByTwoLoopsCountsOnceInTheBacklog() throws Exception {
        try (TestHub hub = new TestHub(HubConfig.builder().broadcastLinger(java.time.Duration.ofMillis(1000)))) {
            List<HubClient> clients = new ArrayList<>();
            for (int i = 0; i < 4; i++) { // spread over the I/O loops
                clients.add(hub.agent("p/a" + i));
            }
            hub.awaitBroadcastsHandedOut();
            HubClient a = clients.get(0);
            List<String> raw = new java.util.concurrent.CopyOnWriteArrayList<>();
            a.onText(raw::add);
            ObjectNode chat = a.frame("chat");
            chat.put("payload", "x".repeat(1000));
            a.send(chat);
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (raw.stream().noneMatch(t -> t.contains("xxxx")) && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            long backlog = hub.server.services().metrics().fanoutBacklogBytes.get(); // lingering on the loops
            String echo = raw.stream().filter(t -> t.contains("xxxx")).findFirst().orElseThrow();
            long frameBytes = echo.getBytes(java.nio.charset.StandardCharsets.UTF_8).length + 4; // + WebSocket header
            assertThat(backlog).as("one batch, shared by every loop").isEqualTo(frameBytes);
            hub.awaitBroadcastsHandedOut();
        }
    }

    /** Waits until a read gets through the (tiny) queue: the writer has caught up. */
    private static void awaitCaughtUp(CoordinationActor actor) throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (true) {
            try {
                actor.read(s -> 0).get(5, TimeUnit.SECONDS);
                return;
            } catch (java.util.concurrent.ExecutionException busy) {
                if (System.nanoTime() > deadline) {
                    throw busy;
                }
                Thread.sleep(1);
            }
        }
    }

    private static boolean await(CountDownLatch latch) {
        try {
            return latch.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

}
