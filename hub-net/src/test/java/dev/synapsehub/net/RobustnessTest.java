package dev.synapsehub.net;

import dev.synapsehub.client.HubClient;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.journal.InMemoryJournal;
import dev.synapsehub.core.journal.Journal;
import dev.synapsehub.core.journal.JournalException;
import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.net.session.Session;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOutboundBuffer;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Paths that protect the hub from its clients and from itself: an unexpected fault closes that
 * connection with 1011 and leaves nothing behind; a client that stops reading is dropped
 * instead of growing the hub; the per-connection rate limit answers a private error.
 */
class RobustnessTest {

    private static boolean isType(ObjectNode f, String type) {
        return type.equals(f.path("type").asText());
    }

    private static ObjectNode claim(HubClient c, String task, String worktree, String... paths) {
        ObjectNode f = c.frame("claim");
        f.put("task_id", task).put("worktree", worktree).put("ttl_seconds", 600);
        ArrayNode p = f.putArray("paths");
        for (String path : paths) {
            p.add(path);
        }
        return f;
    }

    private static String activeClaims(HubClient c) throws Exception {
        JsonNode claims = TestHub.state(c).path("snapshot").path("active_claims").deepCopy();
        for (JsonNode claim : claims) {
            ((ObjectNode) claim).remove(List.of("lease_expires_at", "claimed_at"));
        }
        return claims.toString();
    }

    // ------------------------------------------------------------------------------ 1011

    /**
     * The edge's clock, which throws once on a hub I/O thread after {@code arm(n)}: the n-th
     * read from then on. The pipeline reads it first thing for every frame, so this injects an
     * unexpected runtime fault into frame handling without any hook in production code.
     */
    static final class FaultyClock implements Clock {
        private final AtomicInteger countdown = new AtomicInteger();

        void arm(int nthCall) {
            countdown.set(nthCall);
        }

        @Override
        public double nowSeconds() {
            if (Thread.currentThread().getName().startsWith("synapse-io") && countdown.get() > 0
                    && countdown.decrementAndGet() == 0) {
                throw new IllegalStateException("injected fault");
            }
            return System.currentTimeMillis() / 1000.0;
        }
    }

    @Test
    void aFaultHandlingAFrameCloses1011AndLeavesNoPartialState() throws Exception {
        FaultyClock clock = new FaultyClock();
        try (TestHub hub = new TestHub(HubConfig.builder(), clock)) {
            HubClient victim = hub.agent("p/victim");
            HubClient observer = hub.agent("p/observer");
            victim.send(claim(victim, "T1", "wt", "src/a"));
            observer.awaitType("claim_granted", WAIT);
            String before = activeClaims(observer);

            clock.arm(1);
            victim.send(claim(victim, "T2", "wt", "src/b"));
            assertThat(victim.awaitClose(WAIT)).isEqualTo(new HubClient.CloseStatus(1011, "unexpected fault"));
            ObjectNode left = observer.await(f -> isType(f, "presence_update")
                    && "left".equals(f.path("event").asText()), WAIT);
            assertThat(left.path("agent").asText()).isEqualTo("p/victim");
            assertThat(left.path("online_agents").toString()).isEqualTo("[\"p/observer\"]");

            // nothing half-done: T2 was never submitted, T1 is untouched (claims outlive sockets),
            // the name, its socket and its host count are gone, other connections carry on
            assertThat(activeClaims(observer)).isEqualTo(before);
            assertThat(observer.pending()).noneMatch(f -> isType(f, "claim_granted"));
            assertThat(hub.server.services().registry().isOnline("p/victim")).isFalse();
            assertThat(hub.server.services().registry().connectedClients()).isEqualTo(1);
            assertThat(hub.server.services().metrics().faults.get()).isEqualTo(1);
            HubClient back = hub.agent("p/victim"); // no stale binding: no takeover needed
            back.send(claim(back, "T2", "wt", "src/b"));
            assertThat(back.awaitType("claim_granted", WAIT).path("task_id").asText()).isEqualTo("T2");
        }
    }

    @Test
    void aFaultAfterBindingOnATokenHubUnbindsTheNameAgain() throws Exception {
        FaultyClock clock = new FaultyClock();
        try (TestHub hub = new TestHub(HubConfig.builder().token("t"), clock)) {
            HubClient victim = hub.connect();
            clock.arm(2); // 1: the frame's arrival time; 2: the welcome, after the name was bound
            ObjectNode hb = victim.frame("p/victim", "heartbeat");
            hb.put("token", "t");
            victim.send(hb);
            assertThat(victim.awaitClose(WAIT)).isEqualTo(new HubClient.CloseStatus(1011, "unexpected fault"));
            assertThat(victim.received()).noneMatch(f -> isType(f, "welcome"));
            long deadline = System.nanoTime() + WAIT.toNanos();
            // the name is unbound when the hub sees the socket close, a moment after the client
            // has read the close frame: wait for both, then require both
            while ((hub.server.services().registry().connectedClients() > 0
                    || !hub.server.services().registry().online().isEmpty()) && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertThat(hub.server.services().registry().connectedClients()).isZero();
            assertThat(hub.server.services().registry().online()).isEmpty();
            HubClient again = hub.connect();
            assertThat(again.register("p/victim", "t", WAIT).path("protocol_version").asInt()).isEqualTo(2);
        }
    }

    /** A journal that fails its next append when armed (then works again). */
    static final class FlakyJournal implements Journal {
        private final InMemoryJournal delegate = new InMemoryJournal();
        final AtomicBoolean failNext = new AtomicBoolean();

        @Override
        public List<JournaledEvent> append(List<CoordinationEvent> batch) throws JournalException {
            if (failNext.compareAndSet(true, false)) {
                throw new JournalException("injected append failure");
            }
            return delegate.append(batch);
        }

        @Override
        public void replay(Consumer<JournaledEvent> sink) throws JournalException {
            delegate.replay(sink);
        }

        @Override
        public long lastSeq() {
            return delegate.lastSeq();
        }

        @Override
        public void close() {
            delegate.close();
        }
    }

    @Test
    void aFailedJournalAppendIsATypedErrorNothingAppliedAndTheSocketKept() throws Exception {
        FlakyJournal journal = new FlakyJournal();
        CoordinationActor actor = new CoordinationActor(new CoordinationState(), journal, Clock.system(),
                ActorSettings.DEFAULTS);
        actor.start();
        try (TestHub hub = new TestHub(HubConfig.builder(), actor, Clock.system())) {
            HubClient a = hub.agent("p/a");
            HubClient b = hub.agent("p/b");
            a.send(claim(a, "T1", "wt", "src/a"));
            long epoch = a.awaitType("claim_granted", WAIT).path("epoch").asLong();
            String before = activeClaims(b);
            journal.failNext.set(true);
            ObjectNode upd = a.frame("task_update");
            upd.put("task_id", "T1").put("status", "working");
            a.send(upd);
            ObjectNode error = a.awaitType("error", WAIT);
            assertThat(error.path("error_code").asText()).isEqualTo("journal_failed");
            assertThat(error.path("target").asText()).isEqualTo("p/a");
            assertThat(activeClaims(b)).isEqualTo(before);
            assertThat(b.pending()).noneMatch(f -> isType(f, "task_updated"));
            a.send(upd);
            assertThat(a.awaitType("task_updated", WAIT).path("version").asInt()).isEqualTo(1);
            a.send(claim(a, "T9", "wt2"));
            assertThat(a.awaitType("claim_granted", WAIT).path("epoch").asLong()).isEqualTo(epoch + 1);
            assertThat(a.isOpen()).isTrue();
        }
    }

    // ----------------------------------------------------------------------- slow readers

    private static final int HIGH_WATER = 256 * 1024;
    /** 100 paths of ~1000 characters: a claim_granted broadcast of ~100 KB. */
    private static final int PATHS = 100;

    private static ObjectNode bigClaim(HubClient c) {
        ObjectNode f = claim(c, "FLOOD", "flood");
        ArrayNode p = (ArrayNode) f.get("paths");
        for (int i = 0; i < PATHS; i++) {
            p.add("src/" + i + "/" + "x".repeat(1000));
        }
        return f;
    }

    /** Bytes the hub holds for {@code name}'s socket, or -1 once it is gone. */
    private static long pending(TestHub hub, String name) {
        Session s = hub.server.services().registry().session(name);
        if (s == null) {
            return -1;
        }
        ChannelOutboundBuffer buffer = s.channel().unsafe().outboundBuffer();
        return buffer == null ? -1 : buffer.totalPendingWriteBytes();
    }

    /** Flooder that keeps nothing it receives and counts its own grants. */
    private static Semaphore grantsOf(HubClient flooder) {
        Semaphore grants = new Semaphore(0);
        flooder.onFrame(f -> {
            if (isType(f, "claim_granted")) {
                grants.release();
            }
        });
        return grants;
    }

    @Test
    void aClientThatStopsReadingIsDroppedAfterTheGraceAboveTheHighWaterMark() throws Exception {
        Duration grace = Duration.ofMillis(400);
        try (TestHub hub = new TestHub(HubConfig.builder().outboundHighWaterBytes(HIGH_WATER).slowReaderGrace(grace))) {
            HubClient flooder = hub.agent("p/flooder");
            HubClient slow = hub.agent("p/slow");
            slow.pauseReading();
            Semaphore grants = grantsOf(flooder);
            Channel slowChannel = hub.server.services().registry().session("p/slow").channel();
            long maxPending = 0;
            int sent = 0;
            long firstStall = 0;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            // Keep the hub's buffer for the slow socket just above the high-water mark: send only
            // while it is writable. The kernel's socket buffers grow and absorb some of it, so
            // the socket may turn writable again a few times before they are full; once it stays
            // above the mark for the grace, the hub drops it.
            while (hub.server.services().registry().isOnline("p/slow") && sent < 1000 && System.nanoTime() < deadline) {
                if (slowChannel.isWritable()) {
                    flooder.send(bigClaim(flooder));
                    sent++;
                    assertThat(grants.tryAcquire(5, TimeUnit.SECONDS)).isTrue();
                    // The requester is served first; the other sockets get the broadcast after the
                    // linger, from their loop's drain: wait until it has been handed to every socket.
                    hub.awaitBroadcastsHandedOut();
                    maxPending = Math.max(maxPending, pending(hub, "p/slow"));
                } else {
                    if (firstStall == 0) {
                        firstStall = System.nanoTime();
                    }
                    Thread.sleep(5);
                }
            }
            assertThat(firstStall).as("never passed the high-water mark in %d grants", sent).isPositive();
            long droppedAfterMillis = (System.nanoTime() - firstStall) / 1_000_000;
            assertThat(hub.server.services().registry().isOnline("p/slow")).as("online after %d grants", sent).isFalse();
            assertThat(droppedAfterMillis).isGreaterThanOrEqualTo(grace.toMillis() - 50);
            // fed only while under the mark: never near the hard cap of twice the mark
            assertThat(maxPending).isLessThan(2L * HIGH_WATER);
            assertThat(hub.server.services().metrics().slowReadersDisconnected.get()).isGreaterThanOrEqualTo(1);
            assertThat(slowChannel.isOpen()).isFalse();
            flooder.send(flooder.frame("who_request")); // the rest of the hub carries on
            assertThat(hub.server.services().registry().isOnline("p/flooder")).isTrue();
        }
    }

    @Test
    void aFloodToAClientThatStopsReadingDoesNotGrowTheHub() throws Exception {
        try (TestHub hub = new TestHub(HubConfig.builder().outboundHighWaterBytes(HIGH_WATER)
                .slowReaderGrace(Duration.ofSeconds(60)))) { // the grace never ends here: the hard cap must act
            HubClient flooder = hub.agent("p/flooder");
            HubClient slow = hub.agent("p/slow");
            slow.pauseReading();
            Semaphore grants = grantsOf(flooder);
            long heapBefore = usedHeapAfterGc();
            long maxPending = 0;
            int sent = 0;
            long start = System.nanoTime();
            while (hub.server.services().registry().isOnline("p/slow") && sent < 1000
                    && System.nanoTime() - start < TimeUnit.SECONDS.toNanos(30)) {
                flooder.send(bigClaim(flooder));
                sent++;
                assertThat(grants.tryAcquire(5, TimeUnit.SECONDS)).isTrue();
                maxPending = Math.max(maxPending, pending(hub, "p/slow"));
            }
            assertThat(hub.server.services().registry().isOnline("p/slow")).as("still online after %d grants", sent)
                    .isFalse();
            // twice the high-water mark, plus at most the one frame that crossed it
            assertThat(maxPending).isLessThanOrEqualTo(2L * HIGH_WATER + 150_000);
            // ~100 KB per grant went out; the flood keeps going after the drop, at no cost
            for (int i = 0; i < 50; i++) {
                flooder.send(bigClaim(flooder));
                assertThat(grants.tryAcquire(5, TimeUnit.SECONDS)).isTrue();
            }
            long grown = usedHeapAfterGc() - heapBefore;
            assertThat(grown).as("heap growth after %d floods of ~100 KB", sent + 50).isLessThan(32L * 1024 * 1024);
            assertThat(hub.server.services().metrics().slowReadersDisconnected.get()).isGreaterThanOrEqualTo(1);
            // the writes still queued for the dropped socket fail when it closes: expected, not faults
            assertThat(hub.server.services().metrics().faults.get()).isZero();
        }
    }

    private static long usedHeapAfterGc() throws InterruptedException {
        Runtime rt = Runtime.getRuntime();
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(50);
        }
        return rt.totalMemory() - rt.freeMemory();
    }

    // ------------------------------------------------------------------------- rate limit

    @Test
    void thePerConnectionRateLimitAnswersAPrivateErrorAndExemptsHeartbeats() throws Exception {
        try (TestHub hub = new TestHub(HubConfig.builder().ratePerSecond(0.2).rateBurst(3))) {
            HubClient a = hub.agent("p/a");
            HubClient b = hub.agent("p/b");
            a.awaitType("presence_update", WAIT); // b joined
            for (int i = 0; i < 6; i++) {
                a.send(a.frame("who_request"));
            }
            for (int i = 0; i < 3; i++) {
                a.awaitType("who_snapshot", WAIT);
            }
            for (int i = 0; i < 3; i++) {
                ObjectNode e = a.awaitType("error", WAIT);
                assertThat(e.path("error_code").asText()).isEqualTo("rate_limited");
                assertThat(e.path("target").asText()).isEqualTo("p/a");
            }
            a.send(a.frame("heartbeat")); // heartbeats are exempt and, as keepalives, get no reply
            a.send(claim(a, "TR", "wt", "src/r"));
            assertThat(a.awaitType("error", WAIT).path("error_code").asText()).isEqualTo("rate_limited");
            TestHub.assertQuiet(a);
            assertThat(a.isOpen()).isTrue();
            // the limit is per connection: b is unaffected, and the refused claim changed nothing
            assertThat(activeClaims(b)).isEqualTo("[]");
            assertThat(TestHub.state(b).path("type").asText()).isEqualTo("state_snapshot");
            assertThat(hub.server.services().metrics().rateLimited.get()).isEqualTo(4);
        }
    }

    /**
     * {@code --host-rate} (contract §4.3 step 3): one bucket for every frame of every socket from
     * the address, heartbeats included; reconnecting does not refill it; a keyed retry past it
     * still gets its first answer.
     */
    @Test
    void thePerHostRateLimitCountsEverySocketOfTheHostAndAKeyedRetryStillGetsItsFirstAnswer() throws Exception {
        try (TestHub hub = new TestHub(HubConfig.builder().hostRatePerSecond(0.01).hostRateBurst(6))) {
            HubClient a = hub.agent("p/a"); // 1 (the registration heartbeat)
            HubClient b = hub.agent("p/b"); // 2: the same host
            a.awaitType("presence_update", WAIT); // b joined
            ObjectNode keyed = claim(a, "TH", "wt", "src/h");
            keyed.put("idem_key", "h-1");
            a.send(keyed); // 3
            String granted = a.awaitType("claim_granted", WAIT).toString();
            a.send(a.frame("who_request")); // 4
            a.awaitType("who_snapshot", WAIT);
            b.send(b.frame("heartbeat")); // 5: heartbeats count
            // 6, on b's socket: its answer shows the heartbeat before it was counted too (a's next frame,
            // on another I/O loop, could otherwise be counted before b's loop got to the heartbeat)
            b.send(b.frame("who_request"));
            b.awaitType("who_snapshot", WAIT);

            a.send(a.frame("who_request"));
            ObjectNode refused = a.awaitType("error", WAIT);
            assertThat(refused.path("error_code").asText()).isEqualTo("rate_limited");
            assertThat(refused.path("payload").asText()).isEqualTo("Host rate limit exceeded; slow down.");
            assertThat(refused.path("target").asText()).isEqualTo("p/a");
            b.send(b.frame("who_request"));
            assertThat(b.awaitType("error", WAIT).path("error_code").asText()).as("b shares a's host")
                    .isEqualTo("rate_limited");

            a.send(keyed); // a keyed retry: its first answer, from the ledger
            assertThat(a.awaitType("claim_granted", WAIT).toString()).isEqualTo(granted);
            ObjectNode fresh = claim(a, "TH2", "wt", "src/h2");
            fresh.put("idem_key", "h-2");
            a.send(fresh); // a new keyed request is refused, and changes nothing
            assertThat(a.awaitType("error", WAIT).path("error_code").asText()).isEqualTo("rate_limited");

            HubClient c = hub.connect(); // a new socket of the host: the bucket is not refilled
            c.send(c.frame("p/c", "heartbeat"));
            ObjectNode early = c.awaitType("error", WAIT);
            assertThat(early.path("error_code").asText()).isEqualTo("rate_limited");
            assertThat(early.path("target").asText()).isEqualTo("all");
            assertThat(c.isOpen()).as("the socket is kept").isTrue();
            // a keyed first frame past the limit binds nothing: no takeover of p/a
            HubClient d = hub.connect();
            ObjectNode takeover = d.frame("p/a", "who_request");
            takeover.put("idem_key", "any-key").put("takeover", true);
            d.send(takeover);
            assertThat(d.awaitType("error", WAIT).path("error_code").asText()).isEqualTo("rate_limited");
            TestHub.assertQuiet(a);
            assertThat(a.isOpen()).as("p/a was not taken over").isTrue();
            assertThat(hub.server.services().metrics().hostRateLimited.get()).isEqualTo(5);
            assertThat(hub.server.services().metrics().rateLimited.get()).isEqualTo(5);
            assertThat(hub.server.services().actor().read(s -> s.claims().liveClaim("TH2",
                    System.currentTimeMillis() / 1000.0).isPresent()).get()).isFalse();
        }
    }

    @Test
    void aHubBehindOnItsBroadcastsAnswersBusyChangesNothingAndRecovers() throws Exception {
        // a one-second linger keeps the first grant queued for beta; a 1-byte limit makes that a backlog
        HubConfig.Builder config = HubConfig.builder().broadcastLinger(Duration.ofSeconds(1)).maxFanoutBacklogBytes(1);
        try (TestHub hub = new TestHub(config)) {
            HubClient alpha = hub.agent("p/alpha");
            hub.agent("p/beta");
            hub.awaitBroadcastsHandedOut(); // beta's own presence_update
            alpha.send(claim(alpha, "T1", "wt", "src/a"));
            alpha.awaitType("claim_granted", WAIT);
            alpha.send(claim(alpha, "T2", "wt", "src/b"));
            ObjectNode busy = alpha.awaitType("error", WAIT);
            assertThat(busy.path("error_code").asText()).isEqualTo("busy");
            // a query is work for the same publishing thread: refused too while behind
            alpha.send(alpha.frame("state_request"));
            assertThat(alpha.awaitType("error", WAIT).path("error_code").asText()).isEqualTo("busy");
            assertThat(hub.server.services().metrics().fanoutBusyRefusals.get()).isEqualTo(2);
            hub.awaitBroadcastsHandedOut();
            assertThat(activeClaims(alpha)).contains("T1").doesNotContain("T2"); // the refusal changed nothing
            alpha.send(claim(alpha, "T2", "wt", "src/b"));
            assertThat(alpha.awaitType("claim_granted", WAIT).path("task_id").asText()).isEqualTo("T2");
        }
    }
}
