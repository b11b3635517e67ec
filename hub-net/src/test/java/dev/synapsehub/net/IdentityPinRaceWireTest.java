package dev.synapsehub.net;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.command.IdentityPinCommand;
import dev.synapsehub.core.event.ChatEvent;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.event.IdentityPinEvent;
import dev.synapsehub.core.identity.IdentityPin;
import dev.synapsehub.core.journal.InMemoryJournal;
import dev.synapsehub.core.journal.Journal;
import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.net.identity.IdentityPinSettings;
import dev.synapsehub.net.identity.PinReclaimAcl;
import dev.synapsehub.net.session.Session;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Pin races (contract A2.3, INV-IP-2): a socket whose first frame loses the race for an unpinned
 * name to another key is closed 4013 {@code identity pin mismatch}, and nothing of that frame
 * applies: no claim, no journal record, no takeover of the winner, no lease left behind. The
 * writer is held inside the winner's pin commit so the loser's frame reaches the hub while that
 * pin is decided but not yet committed, the window the race lives in.
 */
class IdentityPinRaceWireTest {

    /** An in-memory journal that holds the writer inside the commit of one name's pin until released. */
    private static final class PinHoldingJournal implements Journal {
        private final InMemoryJournal inner = new InMemoryJournal();
        private final List<CoordinationEvent> appended = new CopyOnWriteArrayList<>();
        private final CountDownLatch holding = new CountDownLatch(1);
        private final CountDownLatch release = new CountDownLatch(1);
        private volatile String holdFor;

        @Override
        public List<JournaledEvent> append(List<CoordinationEvent> batch) {
            String name = holdFor;
            if (name != null
                    && batch.stream().anyMatch(e -> e instanceof IdentityPinEvent p && p.name().equals(name))) {
                holdFor = null;
                holding.countDown();
                try {
                    if (!release.await(WAIT.toMillis() * 2, TimeUnit.MILLISECONDS)) {
                        throw new IllegalStateException("the test never released the held pin commit");
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(e);
                }
            }
            appended.addAll(batch);
            return inner.append(batch);
        }

        void holdPinOf(String name) {
            holdFor = name;
        }

        void awaitHolding() throws InterruptedException {
            assertThat(holding.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)).as("the writer holds the pin commit")
                    .isTrue();
        }

        void release() {
            release.countDown();
        }

        @Override
        public void replay(Consumer<JournaledEvent> sink) {
            inner.replay(sink);
        }

        @Override
        public List<JournaledEvent> readAfter(long afterSeq, int limit, Set<String> kinds) {
            return inner.readAfter(afterSeq, limit, kinds);
        }

        @Override
        public long lastSeq() {
            return inner.lastSeq();
        }

        @Override
        public void close() {
            inner.close();
        }
    }

    private static TestHub hubOver(PinHoldingJournal journal) throws InterruptedException {
        return hubOver(journal, HubConfig.builder());
    }

    private static TestHub hubOver(PinHoldingJournal journal, HubConfig.Builder config) throws InterruptedException {
        CoordinationActor actor = new CoordinationActor(new CoordinationState(), journal, Clock.system(),
                ActorSettings.DEFAULTS);
        actor.start();
        return new TestHub(config.identityPins(new IdentityPinSettings(true, null, PinReclaimAcl.NONE)),
                actor, Clock.system());
    }

    /** Runs nothing on {@code executor}, so every task handed to it before has run when this returns. */
    private static void drained(java.util.concurrent.Executor executor) throws Exception {
        CountDownLatch ran = new CountDownLatch(1);
        executor.execute(ran::countDown);
        assertThat(ran.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)).as("the executor ran its tasks").isTrue();
    }

    private static boolean presenceOf(JsonNode f, String agent) {
        return "presence_update".equals(f.path("type").asText()) && agent.equals(f.path("agent").asText());
    }

    /** A first frame that claims a task, signed by {@code key} for {@code sender}. */
    private static ObjectNode signedClaim(IdentityKey key, String sender, String task) {
        ObjectNode claim = key.registration(sender);
        claim.put("type", "claim");
        claim.put("task_id", task).put("worktree", "wt");
        claim.putArray("paths").add("src/" + task + ".py");
        return key.sign(claim);
    }

    private static void awaitTrue(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(what + " did not happen within " + WAIT);
            }
            Thread.sleep(2);
        }
    }

    private static void assertRefusedAsPinMismatch(HubClient loser, String name, String pinnedKeyId)
            throws Exception {
        JsonNode error = loser.await(f -> f.has("verification_result"), WAIT);
        assertThat(error.path("type").asText()).isEqualTo("error");
        assertThat(error.path("verification_result").asText()).isEqualTo("unknown_key");
        assertThat(error.path("payload").asText()).startsWith("identity pin: name '" + name + "' is pinned to key "
                + pinnedKeyId + " (unknown_key).");
        assertThat(loser.awaitClose(WAIT)).isEqualTo(new HubClient.CloseStatus(4013, "identity pin mismatch"));
        assertThat(loser.pending()).noneMatch(f -> "claim_granted".equals(f.path("type").asText())
                || "lease_granted".equals(f.path("type").asText()));
    }

    private static void assertNoClaims(TestHub hub, PinHoldingJournal journal) throws Exception {
        HubClient observer = hub.agent("p/observer");
        assertThat(TestHub.state(observer).path("snapshot").path("active_claims")).isEmpty();
        assertThat(journal.appended).as("nothing but pins was journaled").allMatch(e -> e instanceof IdentityPinEvent);
    }

    @Test
    void aTakeoverLosingThePinRaceIsRefusedBeforeItBindsAndItsFirstFrameAppliesNothing() throws Exception {
        PinHoldingJournal journal = new PinHoldingJournal();
        try (TestHub hub = hubOver(journal)) {
            IdentityKey ann = IdentityKey.generate();
            IdentityKey mallory = IdentityKey.generate();
            journal.holdPinOf("p/ann");
            HubClient winner = hub.connect();
            winner.send(ann.registration("p/ann"));
            journal.awaitHolding(); // ann's name is bound and its pin decided, not yet committed

            HubClient loser = hub.connect();
            ObjectNode takeover = signedClaim(mallory, "p/ann", "T1");
            takeover.put("takeover", true);
            takeover.put("lease", true);
            loser.send(mallory.sign(takeover));
            // the loser's frame reached the hub: it waits for ann's turn (or, racing, took the name over)
            var metrics = hub.server.services().metrics();
            awaitTrue(() -> metrics.identityPinWaits.get() > 0 || !winner.isOpen(), "the loser's first frame");
            journal.release();

            assertRefusedAsPinMismatch(loser, "p/ann", ann.keyId);
            // the winner was never superseded: it is admitted and stays bound
            winner.awaitWhileOpen(f -> "presence_update".equals(f.path("type").asText())
                    && "p/ann".equals(f.path("agent").asText()) && "joined".equals(f.path("event").asText()), WAIT);
            winner.send(winner.frame("p/ann", "who_request"));
            assertThat(winner.awaitWhileOpen(f -> "who_snapshot".equals(f.path("type").asText()), WAIT)
                    .path("online_agents").toString()).contains("p/ann");
            assertThat(hub.actor.committedPin("p/ann")).map(IdentityPin::keyId).contains(ann.keyId);
            assertThat(hub.server.services().registry().leaseLive("p/ann", Clock.system().nowSeconds())).isFalse();
            assertNoClaims(hub, journal);
        }
    }

    @Test
    void aFirstFrameWhoseNameGotPinnedToAnotherKeyMeanwhileAppliesNothing() throws Exception {
        PinHoldingJournal journal = new PinHoldingJournal();
        try (TestHub hub = hubOver(journal)) {
            IdentityKey ann = IdentityKey.generate();
            IdentityKey mallory = IdentityKey.generate();
            journal.holdPinOf("p/ann");
            // a pin this node's edge did not order, as one made through another mesh node
            hub.actor.submit(Mutation.of(new IdentityPinCommand.Pin("p/ann", ann.keyId, ann.publicKey)));
            journal.awaitHolding();

            HubClient loser = hub.connect();
            ObjectNode claim = signedClaim(mallory, "p/ann", "T1");
            claim.put("lease", true);
            loser.send(mallory.sign(claim));
            loser.send(loser.frame("p/ann", "claim").put("task_id", "T2").put("worktree", "wt")); // held behind it
            awaitTrue(() -> hub.actor.queueDepth() > 0, "the loser's pin submitted"); // it passed the pin check
            journal.release();

            assertRefusedAsPinMismatch(loser, "p/ann", ann.keyId);
            assertThat(hub.actor.committedPin("p/ann")).map(IdentityPin::keyId).contains(ann.keyId);
            // the refused bind left no ownership lease: the pin's owner binds the name without one
            awaitTrue(() -> !hub.server.services().registry().isOnline("p/ann"), "the loser's unbinding");
            assertThat(hub.server.services().registry().leaseLive("p/ann", Clock.system().nowSeconds())).isFalse();
            HubClient owner = hub.connect();
            owner.send(ann.registration("p/ann"));
            owner.awaitWhileOpen(f -> "presence_update".equals(f.path("type").asText())
                    && "p/ann".equals(f.path("agent").asText()) && "joined".equals(f.path("event").asText()), WAIT);
            assertNoClaims(hub, journal);
        }
    }

    @Test
    void aDirectedChatFindingTheNameWhilePinnedIsDeliveredAfterTheWelcomeNotBefore() throws Exception {
        PinHoldingJournal journal = new PinHoldingJournal();
        try (TestHub hub = hubOver(journal, HubConfig.builder().token("sekrit").privateDirectedMessages(true))) {
            IdentityKey ann = IdentityKey.generate();
            HubClient bob = hub.connect();
            bob.register("p/bob", "sekrit", WAIT);
            bob.send(bob.frame("p/bob", "who_request"));
            bob.awaitType("who_snapshot", WAIT); // bob's joined is out before p/ann connects: not this test's concern
            var outbox = hub.server.services().outbox();
            CountDownLatch stalled = new CountDownLatch(1);
            outbox.executor().execute(() -> { // the outbox thread stalls: the chat below is decided, not yet fanned out
                try {
                    stalled.await(WAIT.toMillis() * 2, TimeUnit.MILLISECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            ObjectNode chat = bob.frame("chat");
            chat.put("target", "p/ann").put("payload", "for ann");
            bob.send(chat); // resolved while p/ann is offline: a connection binding it later gets it at fan-out
            awaitTrue(() -> journal.appended.stream().anyMatch(e -> e instanceof ChatEvent), "the chat decided");

            journal.holdPinOf("p/ann");
            HubClient annClient = hub.connect();
            ObjectNode registration = ann.registration("p/ann");
            registration.put("token", "sekrit");
            annClient.send(ann.sign(registration));
            journal.awaitHolding(); // p/ann is bound, its pin decided, not committed: no welcome yet

            stalled.countDown();
            drained(outbox.executor()); // the chat was fanned out meanwhile
            Session annSession = hub.server.services().registry().session("p/ann");
            assertThat(annSession).isNotNull();
            drained(annSession.channel().eventLoop()); // and whatever it handed to p/ann's socket was written
            journal.release();

            ObjectNode delivered = annClient.await(f -> "chat".equals(f.path("type").asText()), WAIT);
            assertThat(delivered.path("payload").asText()).as("held, not lost").isEqualTo("for ann");
            List<String> types = annClient.received().stream().map(f -> f.path("type").asText()).toList();
            assertThat(types).contains("welcome");
            assertThat(types.indexOf("chat")).as("no chat to the name reaches a client before its welcome: %s",
                    annClient.received()).isGreaterThan(types.indexOf("welcome"));
        }
    }

    @Test
    void aDirectedChatHeldForASocketThatLosesThePinRaceIsDroppedAndCounted() throws Exception {
        PinHoldingJournal journal = new PinHoldingJournal();
        try (TestHub hub = hubOver(journal, HubConfig.builder().privateDirectedMessages(true))) {
            IdentityKey ann = IdentityKey.generate();
            IdentityKey mallory = IdentityKey.generate();
            HubClient bob = hub.agent("p/bob");
            var outbox = hub.server.services().outbox();
            var metrics = hub.server.services().metrics();
            CountDownLatch stalled = new CountDownLatch(1);
            outbox.executor().execute(() -> { // the outbox thread stalls: the chat below is decided, not yet fanned out
                try {
                    stalled.await(WAIT.toMillis() * 2, TimeUnit.MILLISECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            ObjectNode chat = bob.frame("p/bob", "chat");
            chat.put("target", "p/ann").put("payload", "for ann");
            bob.send(chat); // resolved while p/ann is offline: a connection binding it later gets it at fan-out
            awaitTrue(() -> journal.appended.stream().anyMatch(e -> e instanceof ChatEvent), "the chat decided");

            journal.holdPinOf("p/ann");
            // ann's pin, ordered elsewhere (another mesh node), decided but held before it commits
            hub.actor.submit(Mutation.of(new IdentityPinCommand.Pin("p/ann", ann.keyId, ann.publicKey)));
            journal.awaitHolding();
            HubClient loser = hub.connect();
            loser.send(mallory.registration("p/ann"));
            awaitTrue(() -> hub.actor.queueDepth() > 0, "the loser bound and its pin submitted");

            stalled.countDown();
            drained(outbox.executor()); // the chat was fanned out to the loser's socket: held until its decision
            assertThat(metrics.heldDeliveriesDropped.get()).isZero();
            journal.release();

            assertRefusedAsPinMismatch(loser, "p/ann", ann.keyId);
            awaitTrue(() -> metrics.heldDeliveriesDropped.get() == 1, "the held chat counted as dropped");
            assertThat(loser.received()).noneMatch(f -> "chat".equals(f.path("type").asText()));
        }
    }

    @Test
    void aChatFanningOutWhileAPinningTakeoverBindsWaitsForItsWelcome() throws Exception {
        PinHoldingJournal journal = new PinHoldingJournal();
        // loops enough for the three sockets below to get one each: only the new one's loop is stalled
        try (TestHub hub = hubOver(journal, HubConfig.builder().token("sekrit").privateDirectedMessages(true)
                .ioLoops(4))) {
            IdentityKey ann = IdentityKey.generate();
            var registry = hub.server.services().registry();
            HubClient oldAnn = hub.connect();
            oldAnn.register("p/ann", "sekrit", WAIT); // unsigned: the name stays unpinned
            HubClient bob = hub.connect();
            bob.register("p/bob", "sekrit", WAIT);
            Session old = registry.session("p/ann");
            Session bobSession = registry.session("p/bob");
            assertThat(old).isNotNull();
            assertThat(bobSession).isNotNull();

            HubClient newAnn = hub.connect();
            ObjectNode takeover = ann.registration("p/ann");
            takeover.put("token", "sekrit").put("takeover", true);
            Session taken;
            // the takeover's bind closes the superseded socket, which waits for this monitor: its event loop
            // stalls right after the bind made p/ann its name, the window a fan-out could find it in
            synchronized (old.answers()) {
                newAnn.send(ann.sign(takeover));
                awaitTrue(() -> registry.session("p/ann") != old, "the takeover bound p/ann");
                taken = registry.session("p/ann");
                assertThat(taken.channel().eventLoop()).as("bob is served by another loop")
                        .isNotSameAs(bobSession.channel().eventLoop());
                ObjectNode chat = bob.frame("p/bob", "chat");
                chat.put("target", "p/ann").put("payload", "for ann");
                bob.send(chat);
                bob.await(f -> "chat".equals(f.path("type").asText()), WAIT); // its own copy: fanned out
                drained(hub.server.services().outbox().executor()); // to p/ann's new socket too
            }

            ObjectNode delivered = newAnn.await(f -> "chat".equals(f.path("type").asText()), WAIT);
            assertThat(delivered.path("payload").asText()).as("held, not lost").isEqualTo("for ann");
            List<String> types = newAnn.received().stream().map(f -> f.path("type").asText()).toList();
            assertThat(types).contains("welcome");
            assertThat(types.indexOf("chat")).as("no chat to the name reaches a client before its welcome: %s",
                    newAnn.received()).isGreaterThan(types.indexOf("welcome"));
        }
    }

    @Test
    void aSocketGoneBeforeItsPinDecisionIsNeverAnnouncedLeft() throws Exception {
        PinHoldingJournal journal = new PinHoldingJournal();
        // a short keepalive: the socket whose frames are held is read from no more, so the hub drops it
        try (TestHub hub = hubOver(journal, HubConfig.builder().pingInterval(java.time.Duration.ofMillis(200)))) {
            IdentityKey ann = IdentityKey.generate();
            HubClient observer = hub.agent("p/observer");
            journal.holdPinOf("p/ann");
            HubClient annClient = hub.connect();
            annClient.send(ann.registration("p/ann"));
            journal.awaitHolding();
            var registry = hub.server.services().registry();
            Session annSession = registry.session("p/ann");
            assertThat(annSession).isNotNull();
            annClient.close();
            awaitTrue(() -> !registry.isOnline("p/ann"), "p/ann's socket dropped before its pin decision");
            drained(annSession.channel().eventLoop()); // its departure handled: any presence of it handed on
            drained(hub.server.services().outbox().executor());
            journal.release();

            observer.send(observer.frame("p/observer", "who_request"));
            observer.awaitWhileOpen(f -> "who_snapshot".equals(f.path("type").asText()), WAIT);
            assertThat(observer.received()).as("never announced joined, so never left either")
                    .noneMatch(f -> presenceOf(f, "p/ann"));
        }
    }
}
