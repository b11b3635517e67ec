package dev.synapsehub.federation.link;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.tls.ClientTls;
import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.journal.InMemoryJournal;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.federation.testing.Pki;
import dev.synapsehub.net.HubConfig;
import dev.synapsehub.net.HubServer;
import dev.synapsehub.net.extension.ClaimService;
import dev.synapsehub.net.extension.HubExtension;
import dev.synapsehub.net.extension.HubExtensions;
import dev.synapsehub.net.extension.HubServices;
import dev.synapsehub.net.protocol.Request;
import dev.synapsehub.net.tls.TlsFiles;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link PeerLink#sendConfirmed}: a frame the peer answers only to refuse it, followed by a
 * barrier request on the same connection. The link is shared per peer (forwarded claims, relays,
 * log pulls), so the refusal ({@code error}) must answer the frame, never an older request; and a
 * connection lost before the barrier's reply must fail the send (retryable), not be confirmed by a
 * barrier answered on a new connection.
 */
class PeerLinkConfirmedSendTest {
    private static final Duration WAIT = Duration.ofSeconds(20);

    @TempDir
    Path dir;
    private HubServer server;
    private CoordinationActor actor;
    private Pki.HubCerts b;
    /** The held claim request, answered when the test says so. */
    private final CompletableFuture<Request> heldClaim = new CompletableFuture<>();
    private final AtomicInteger reports = new AtomicInteger();
    private HubServices hub;

    /** A peer without the report's verb (hub-net answers it {@code error}); {@code cutFirstReport}: closes on the first. */
    private PeerLink start(boolean cutFirstReport) throws Exception {
        b = new Pki(dir).hub("hub-b");
        actor = new CoordinationActor(new CoordinationState(), new InMemoryJournal(), Clock.system(), ActorSettings.DEFAULTS);
        actor.start();
        HubExtension peer = new HubExtension() {
            @Override
            public void bind(HubServices context, ClaimService claims) {
                hub = context;
            }

            @Override
            public boolean handles(String type) {
                return "multihub_claim_request".equals(type) || cutFirstReport && "dead_letter_forwarding".equals(type);
            }

            @Override
            public void handle(Request r) {
                if ("multihub_claim_request".equals(r.type())) {
                    heldClaim.complete(r);
                } else if (reports.incrementAndGet() == 1) {
                    r.session().channel().close(); // the report arrived, its barrier is never answered here
                }
            }
        };
        server = new HubServer(HubConfig.builder().host("127.0.0.1").port(0).hubId("hub-b")
                .tls(new TlsFiles(b.serverFiles().cert(), b.serverFiles().key(), null)).build(), actor, Clock.system(),
                null, new HubExtensions(List.of(peer)));
        server.start();
        return new PeerLink("hub-b", URI.create("wss://127.0.0.1:" + server.boundPort() + "/"),
                ClientTls.pinned(b.server().pin()), "hub-a", null, WAIT);
    }

    @AfterEach
    void stop() throws Exception {
        if (server != null) {
            server.close();
        }
        if (actor != null) {
            actor.close();
        }
    }

    @Test
    void anErrorToTheReportAnswersTheReportAndAnOlderClaimOnTheLinkStillGetsItsRealAnswer() throws Exception {
        try (PeerLink link = start(false)) {
            ObjectNode claim = frame("multihub_claim_request").put("task_id", "t1");
            CompletableFuture<ObjectNode> claimed = link.request(claim, "multihub_claim_result",
                    reply -> "t1".equals(reply.path("task_id").asText()), WAIT);
            Request held = heldClaim.get(WAIT.toSeconds(), TimeUnit.SECONDS); // the claim waits on the peer

            CompletableFuture<Void> reported = link.sendConfirmed(report(), frame("channel_list_request"),
                    "channel_list", WAIT);
            assertThatThrownBy(() -> reported.get(WAIT.toSeconds(), TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(PeerLink.Answered.class);
            assertThat(claimed).as("the report's error is not the claim's answer").isNotDone();

            ObjectNode result = hub.frames().envelope(held.sender(), "multihub_claim_result", "claimed",
                    hub.clock().nowSeconds());
            result.put("task_id", "t1");
            hub.outbox().send(held.session(), result);
            assertThat(claimed.get(WAIT.toSeconds(), TimeUnit.SECONDS).path("payload").asText()).isEqualTo("claimed");
        }
    }

    @Test
    void aConnectionLostBeforeTheBarrierIsAnsweredFailsTheSendRetryablyAndTheNextOneIsConfirmed() throws Exception {
        try (PeerLink link = start(true)) {
            CompletableFuture<Void> lost = link.sendConfirmed(report(), frame("channel_list_request"), "channel_list",
                    WAIT);
            assertThatThrownBy(() -> lost.get(WAIT.toSeconds() * 2, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .satisfies(e -> assertThat(e.getCause()).as("retryable, not a refusal")
                            .isNotInstanceOf(PeerLink.Answered.class));

            link.sendConfirmed(report(), frame("channel_list_request"), "channel_list", WAIT)
                    .get(WAIT.toSeconds() * 2, TimeUnit.SECONDS);
            assertThat(reports.get()).isEqualTo(2);
        }
    }

    @Test
    void aConnectionThatCannotBeOpenedFailsTheSendAtOnceNotAtTheCallersTimeout() throws Exception {
        start(false);
        // the peer's own certificate is not the one pinned: the TLS handshake is refused
        try (PeerLink link = new PeerLink("hub-b", URI.create("wss://127.0.0.1:" + server.boundPort() + "/"),
                ClientTls.pinned(dev.synapsehub.client.tls.TestCertificates.selfSigned("x").pin()), "hub-a", null, WAIT)) {
            CompletableFuture<Void> refused = link.sendConfirmed(report(), frame("channel_list_request"),
                    "channel_list", WAIT);
            // the connection is opened inside the call, so its failure is known when the call returns
            assertThat(refused).as("failed by the refused connection, not left to the caller's timeout")
                    .isCompletedExceptionally();
            assertThatThrownBy(refused::get).isInstanceOf(ExecutionException.class)
                    .satisfies(e -> assertThat(e.getCause()).as("retryable, not a refusal")
                            .isNotInstanceOf(PeerLink.Answered.class));
            assertThat(reports.get()).as("nothing reached the peer").isZero();
        }
    }

    private static ObjectNode report() {
        ObjectNode f = frame("dead_letter_forwarding");
        f.putObject("forwarding").put("target", "proj/ghost").put("count", 2);
        return f;
    }

    private static ObjectNode frame(String type) {
        return JsonNodeFactory.instance.objectNode().put("type", type);
    }
}
