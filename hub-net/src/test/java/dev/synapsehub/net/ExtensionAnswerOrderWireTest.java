package dev.synapsehub.net;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.journal.InMemoryJournal;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.net.extension.ClaimService;
import dev.synapsehub.net.extension.HubExtension;
import dev.synapsehub.net.extension.HubExtensions;
import dev.synapsehub.net.extension.HubServices;
import dev.synapsehub.net.protocol.Outbox;
import dev.synapsehub.net.protocol.Request;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The answers an extension gives on its own paths keep the connection's request order (contract
 * §4.3): an error the edge answers at once for a later frame (malformed JSON) waits for the
 * extension's answer to an earlier one, whether the extension hands it to the outbox thread from
 * the connection's loop or answers later, once its own work (a peer's verdict, the mesh leader's
 * answer) is done.
 */
class ExtensionAnswerOrderWireTest {
    /** Answered through the outbox thread, handed to it on the connection's loop. */
    private static final String IN_ORDER = "test_in_order_request";
    /** Answered once {@link #ready} completes, on a path of the extension's own. */
    private static final String LATER = "test_later_request";

    private final CompletableFuture<Void> ready = new CompletableFuture<>();
    private final AnsweringExtension extension = new AnsweringExtension();
    private CoordinationActor actor;
    private HubServer server;
    private HubClient alpha;

    @AfterEach
    void close() throws Exception {
        ready.complete(null);
        if (alpha != null) {
            alpha.close();
        }
        if (server != null) {
            server.close();
        }
        if (actor != null) {
            actor.close();
        }
    }

    @Test
    void anEdgeErrorFollowsAnAnswerTheExtensionHandedToTheOutboxFromTheLoop() throws Exception {
        start();
        Outbox outbox = server.services().outbox();
        CountDownLatch release = hold(outbox);
        try {
            alpha.send(alpha.frame(IN_ORDER)); // its answer waits for the held outbox thread
            alpha.sendText("{not json"); // answered by the edge, on the connection's loop
            awaitRead();
        } finally {
            release.countDown();
        }
        alpha.awaitType("error", WAIT);
        alpha.awaitType("test_answer", WAIT);
        assertThat(types()).containsExactly("test_answer", "error");
    }

    @Test
    void anEdgeErrorFollowsAnAnswerTheExtensionGivesLaterOnItsOwnPath() throws Exception {
        start();
        alpha.send(alpha.frame(LATER)); // answered once ready completes
        alpha.sendText("{not json");
        awaitRead();
        assertThat(types()).as("the error waits for the earlier request's answer").isEmpty();
        ready.complete(null);
        alpha.awaitType("error", WAIT);
        alpha.awaitType("test_answer", WAIT);
        assertThat(types()).containsExactly("test_answer", "error");
    }

    private void start() throws Exception {
        actor = new CoordinationActor(new CoordinationState(), new InMemoryJournal(), Clock.system(),
                ActorSettings.DEFAULTS);
        actor.start();
        server = new HubServer(HubConfig.builder().host("127.0.0.1").port(0).build(), actor, Clock.system(), null,
                new HubExtensions(List.of(extension)));
        int port = server.start();
        alpha = HubClient.connect(java.net.URI.create("ws://127.0.0.1:" + port + "/"), WAIT);
        alpha.register("p/alpha", null, WAIT);
        alpha.awaitType("presence_update", WAIT);
    }

    /**
     * Until the hub has read the malformed frame: a heartbeat sent after it declares a role, which
     * the hub records on the same loop, after answering (or queueing the answer to) the frame before.
     */
    private void awaitRead() throws Exception {
        ObjectNode heartbeat = alpha.frame("heartbeat");
        heartbeat.putArray("roles").add("marker");
        alpha.send(heartbeat);
        long end = System.nanoTime() + WAIT.toNanos();
        while (!server.services().registry().rolesOf("p/alpha").contains("marker")) {
            assertThat(System.nanoTime()).as("the hub never read the heartbeat").isLessThan(end);
            Thread.sleep(1);
        }
    }

    /** Holds the outbox thread until the returned latch is counted down. */
    private static CountDownLatch hold(Outbox outbox) throws InterruptedException {
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
        assertThat(held.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        return release;
    }

    /** The answer and error types alpha received, in order. */
    private List<String> types() {
        return alpha.received().stream().map(f -> f.path("type").asText())
                .filter(t -> "test_answer".equals(t) || "error".equals(t)).toList();
    }

    /** Answers its two verbs as federation does: in order through the outbox, or later once {@link #ready}. */
    private final class AnsweringExtension implements HubExtension {
        private HubServices hub;

        @Override
        public void bind(HubServices services, ClaimService claims) {
            this.hub = services;
        }

        @Override
        public boolean handles(String type) {
            return IN_ORDER.equals(type) || LATER.equals(type);
        }

        @Override
        public void handle(Request r) {
            if (IN_ORDER.equals(r.type())) {
                answer(r);
            } else {
                hub.outbox().answeredWhen(r.session(), ready.whenComplete((done, failure) -> answer(r)));
            }
        }

        private void answer(Request r) {
            ObjectNode f = hub.frames().envelope(r.sender(), "test_answer", "answered", hub.clock().nowSeconds());
            hub.outbox().sendInOrder(r.session(), hub.frames().write(f));
        }
    }
}
