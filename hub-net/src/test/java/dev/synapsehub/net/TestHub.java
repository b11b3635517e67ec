package dev.synapsehub.net;

import dev.synapsehub.client.HubClient;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.journal.InMemoryJournal;
import dev.synapsehub.core.state.CoordinationState;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeoutException;

/** A real hub on an ephemeral loopback port with an in-memory journal, plus client helpers. */
final class TestHub implements AutoCloseable {
    static final Duration WAIT = Duration.ofSeconds(5);
    static final Duration QUIET = Duration.ofMillis(300);

    final HubServer server;
    final CoordinationActor actor;
    final int port;
    private final List<HubClient> clients = new ArrayList<>();

    TestHub(HubConfig.Builder config) throws InterruptedException {
        this(config, Clock.system());
    }

    /** A hub whose edge (admission, takeover windows, frame timestamps) reads {@code edgeClock}. */
    TestHub(HubConfig.Builder config, Clock edgeClock) throws InterruptedException {
        this(config, started(new CoordinationActor(new CoordinationState(), new InMemoryJournal(), Clock.system(),
                ActorSettings.DEFAULTS)), edgeClock);
    }

    private static CoordinationActor started(CoordinationActor actor) {
        actor.start();
        return actor;
    }

    /** A hub over a started actor (e.g. a durable one); {@link #close()} closes it too. */
    TestHub(HubConfig.Builder config, CoordinationActor actor, Clock edgeClock) throws InterruptedException {
        this(config, actor, edgeClock, null);
    }

    /** A hub over a started actor whose journal {@code journal} the edge reads (null: none). */
    TestHub(HubConfig.Builder config, CoordinationActor actor, Clock edgeClock, dev.synapsehub.core.journal.Journal journal)
            throws InterruptedException {
        this.actor = actor;
        server = new HubServer(config.host("127.0.0.1").port(0).build(), actor, edgeClock, journal);
        port = server.start();
    }

    /** A hub with {@code extensions} plugged in, over a fresh in-memory actor. */
    TestHub(HubConfig.Builder config, dev.synapsehub.net.extension.HubExtensions extensions)
            throws InterruptedException {
        this.actor = started(new CoordinationActor(new CoordinationState(), new InMemoryJournal(), Clock.system(),
                ActorSettings.DEFAULTS));
        server = new HubServer(config.host("127.0.0.1").port(0).build(), actor, Clock.system(), null, extensions);
        port = server.start();
    }

    /** A hub over a SqliteJournal at {@code db} (replayed first), as a journaled hub runs. */
    TestHub(HubConfig.Builder config, java.nio.file.Path db, java.util.function.Supplier<CoordinationState> fresh)
            throws Exception {
        dev.synapsehub.journal.DurableCoordination durable = dev.synapsehub.journal.DurableCoordination.open(db,
                Clock.system(), fresh, ActorSettings.DEFAULTS);
        actor = durable.actor();
        server = new HubServer(config.host("127.0.0.1").port(0).build(), actor, Clock.system(), durable.journal());
        port = server.start();
    }

    /** A journaled open hub over {@code db}. */
    static TestHub journaled(java.nio.file.Path db) throws Exception {
        return new TestHub(HubConfig.builder(), db, CoordinationState::new);
    }

    static TestHub open() throws InterruptedException {
        return new TestHub(HubConfig.builder());
    }

    URI uri() {
        return URI.create("ws://127.0.0.1:" + port + "/");
    }

    HubClient connect() throws Exception {
        HubClient c = HubClient.connect(uri(), WAIT);
        clients.add(c);
        return c;
    }

    /** Connects and registers on an open hub (welcome arrives at connect). */
    HubClient agent(String name) throws Exception {
        HubClient c = connect();
        c.register(name, null, WAIT);
        c.await(f -> "presence_update".equals(f.path("type").asText()) && name.equals(f.path("agent").asText())
                && "joined".equals(f.path("event").asText()), WAIT);
        return c;
    }

    /** Sends a state_request and returns the snapshot's active claims. */
    static ObjectNode state(HubClient c) throws TimeoutException {
        c.send(c.frame("state_request"));
        return c.awaitType("state_snapshot", WAIT);
    }

    /** Waits until every broadcast queued on the I/O loops has been handed to every socket. */
    void awaitBroadcastsHandedOut() throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (server.services().metrics().fanoutBacklogBytes.get() > 0) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("broadcasts still queued after " + WAIT);
            }
            Thread.sleep(1);
        }
    }

    /** Asserts nothing matching arrives within the quiet period. */
    static void assertQuiet(HubClient c) throws InterruptedException {
        Thread.sleep(QUIET.toMillis());
        if (!c.pending().isEmpty()) {
            throw new AssertionError("unexpected frames: " + c.pending());
        }
    }

    @Override
    public void close() throws Exception {
        clients.forEach(HubClient::close);
        server.close();
        actor.close();
    }
}
