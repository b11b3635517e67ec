package dev.synapsehub.federation.link;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.tls.ClientTls;
import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.journal.InMemoryJournal;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.federation.testing.AnsweringExtension;
import dev.synapsehub.net.HubConfig;
import dev.synapsehub.net.HubServer;
import dev.synapsehub.net.extension.HubExtension;
import dev.synapsehub.net.extension.HubExtensions;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The frames a peer sends that no request on the link awaits (the owner's broadcasts, sent to
 * every connection) are read through, not parsed into trees; the outcome stays the tree's: a
 * malformed one still closes the connection, one the tree reads (trailing content, a top-level
 * array) still does not, a reply still reaches its request (also under a repeated {@code type}
 * key, where the last one counts), and a refusal still fails the oldest request.
 */
class PeerLinkBroadcastTest {
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final String PROBE = "test_probe";
    private static final String DONE = "test_probe_done";

    private CoordinationActor actor;
    private HubServer server;
    private PeerLink link;

    /**
     * A peer whose {@code test_probe} sends the raw frames it lists, then {@code test_probe_done}
     * unless {@code silent} (which a frame that closes the connection is: a reply right behind
     * it may still be read before the close).
     */
    @BeforeEach
    void start() throws Exception {
        actor = new CoordinationActor(new CoordinationState(), new InMemoryJournal(), Clock.system(), ActorSettings.DEFAULTS);
        actor.start();
        HubExtension peer = new AnsweringExtension(PROBE::equals, (hub, r) -> {
            for (var frame : r.frame().path("frames")) {
                hub.outbox().sendInOrder(r.session(), Unpooled.wrappedBuffer(Base64.getDecoder().decode(frame.asText())));
            }
            if (r.frame().path("silent").asBoolean()) {
                return;
            }
            hub.outbox().sendInOrder(r.session(), "{\"type\":\"" + DONE + "\",\"payload\":\"done\"}");
        });
        server = new HubServer(HubConfig.builder().host("127.0.0.1").port(0).hubId("hub-b").build(), actor,
                Clock.system(), null, new HubExtensions(List.of(peer)));
        server.start();
        link = new PeerLink("hub-b", URI.create("ws://127.0.0.1:" + server.boundPort() + "/"), ClientTls.NONE, "hub-a",
                null, WAIT);
    }

    @AfterEach
    void stop() throws Exception {
        if (link != null) {
            link.close();
        }
        if (server != null) {
            server.close();
        }
        if (actor != null) {
            actor.close();
        }
    }

    @Test
    void framesNoRequestAwaitsAreNotParsedIntoTrees() throws Exception {
        await(probe()); // warm: the connection's own frames (its presence, ...) are behind us
        long before = link.framesParsedToTrees();

        await(probe(
                "{\"type\":\"claim_granted\",\"task_id\":\"t1\",\"agent\":\"w\",\"payload\":{\"lease\":30,\"x\":[1,2.5,null]}}",
                "{\"sender\":\"hub-b\",\"type\":\"presence\",\"payload\":\"online\"}",
                "{\"type\":\"chat\",\"payload\":\"hi \\u00e9\\n\",\"type\":\"board_changed\"}",
                "{\"type\":\"presence\"} {\"type\":\"" + DONE + "\"}"));

        assertThat(link.framesParsedToTrees() - before)
                .as("only the awaited reply is read into a tree").isEqualTo(1);
    }

    @Test
    void aMalformedFrameNoRequestAwaitsStillClosesTheConnection() throws Exception {
        List<byte[]> malformed = List.of(
                utf8("{\"type\":\"presence\", oops}"),
                utf8("{\"type\":\"presence\",\"payload\":\"cut"),
                utf8("{\"type\":\"presence\",\"payload\":{\"a\":1}"),
                utf8("{\"type\":\"presence\",\"payload\":\"\\q\"}"),
                utf8("{\"type\":\"presence\",\"n\":1,}"),
                utf8("{\"type\":\"presence\",\"n\":" + "1".repeat(1001) + "}"),
                utf8("{\"type\":\"presence\",\"n\":" + "[".repeat(1001) + "]".repeat(1001) + "}"),
                notUtf8("{\"type\":\"presence\",\"payload\":\"X\"}"));
        for (byte[] frame : malformed) {
            PeerLink.Welcome connection = connected();
            ObjectNode silent = probeFrame(frame);
            silent.put("silent", true);
            // the frame closes the connection, which fails the request at once; not its bound (a TimeoutException)
            assertThatThrownBy(() -> await(link.request(silent, DONE, WAIT)))
                    .as(new String(frame, StandardCharsets.ISO_8859_1)).isInstanceOf(ExecutionException.class)
                    .cause().isInstanceOf(IOException.class).hasMessageContaining("closed");
            assertThat(connected()).as("reconnected").isNotSameAs(connection);
        }
    }

    @Test
    void aFrameTheTreeReadsStillKeepsTheConnection() throws Exception {
        List<byte[]> read = List.of(
                utf8("{\"type\":\"presence\"} garbage"),
                utf8("{\"type\":\"presence\"} {}"),
                utf8("{\"type\":\"presence\"}]"),
                utf8("[{\"type\":\"presence\"}]"),
                utf8("{\"type\":\"presence\",\"type\":{\"x\":[1]}}"),
                utf8("null"),
                utf8(""));
        PeerLink.Welcome connection = connected();
        for (byte[] frame : read) {
            assertThat(await(probe(frame)).path("payload").asText()).isEqualTo("done");
            assertThat(connected()).as(new String(frame, StandardCharsets.UTF_8)).isSameAs(connection);
        }
    }

    @Test
    void aFrameOfAnAwaitedTypeStillAnswersItsRequestUnderTheTypeATreeReads() throws Exception {
        connected();
        ObjectNode plain = link.request(probeFrame(utf8("{\"type\":\"peer_news\",\"n\":1}")), "peer_news", WAIT)
                .get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertThat(plain.path("n").asInt()).isEqualTo(1);

        // the first "type" says presence, which nothing awaits; the tree reads the last one
        ObjectNode last = link.request(probeFrame(utf8("{\"type\":\"presence\",\"type\":\"peer_news\",\"n\":2}")),
                "peer_news", WAIT).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertThat(last.path("n").asInt()).isEqualTo(2);

        // the first says peer_news, the tree reads presence: not the reply, the next frame is
        ObjectNode next = link.request(probeFrame(utf8("{\"type\":\"peer_news\",\"type\":\"presence\",\"n\":3}"),
                utf8("{\"type\":\"peer_news\",\"n\":4}")), "peer_news", WAIT).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertThat(next.path("n").asInt()).isEqualTo(4);

        ObjectNode matched = link.request(probeFrame(utf8("{\"type\":\"peer_news\",\"n\":5}"),
                        utf8("{\"type\":\"peer_news\",\"n\":6}")), "peer_news", reply -> reply.path("n").asInt() == 6, WAIT)
                .get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertThat(matched.path("n").asInt()).isEqualTo(6);
    }

    @Test
    void aRefusalStillFailsTheOldestRequest() throws Exception {
        connected();
        for (String refusal : List.of("{\"type\":\"error\",\"payload\":\"no\"}",
                "{\"type\":\"name_conflict\",\"payload\":\"no\"}",
                "{\"type\":\"presence\",\"type\":\"error\",\"payload\":\"no\"}")) {
            ObjectNode silent = probeFrame();
            silent.put("silent", true);
            CompletableFuture<ObjectNode> oldest = link.request(silent, "never_sent", WAIT);
            assertThat(await(probe(utf8(refusal))).path("payload").asText()).isEqualTo("done");
            assertThatThrownBy(() -> oldest.get(WAIT.toSeconds(), TimeUnit.SECONDS)).as(refusal)
                    .hasCauseInstanceOf(PeerLink.Answered.class).hasMessageContaining("no");
        }
    }

    private PeerLink.Welcome connected() throws Exception {
        await(probe());
        return link.welcome();
    }

    private CompletableFuture<ObjectNode> probe(String... frames) {
        return link.request(probeFrame(java.util.Arrays.stream(frames).map(PeerLinkBroadcastTest::utf8)
                .toArray(byte[][]::new)), DONE, WAIT);
    }

    private CompletableFuture<ObjectNode> probe(byte[] frame) {
        return link.request(probeFrame(frame), DONE, WAIT);
    }

    private static ObjectNode probeFrame(byte[]... frames) {
        ObjectNode request = JsonNodeFactory.instance.objectNode();
        request.put("type", PROBE);
        var list = request.putArray("frames");
        for (byte[] frame : frames) {
            list.add(Base64.getEncoder().encodeToString(frame));
        }
        return request;
    }

    private static ObjectNode await(CompletableFuture<ObjectNode> reply) throws Exception {
        return reply.get(WAIT.toSeconds() * 2, TimeUnit.SECONDS);
    }

    private static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    /** {@code text} with its 'X' as an overlong two-byte form, which Jackson would read. */
    private static byte[] notUtf8(String text) {
        byte[] bytes = utf8(text);
        int x = text.indexOf('X');
        byte[] overlong = new byte[bytes.length + 1];
        System.arraycopy(bytes, 0, overlong, 0, x);
        overlong[x] = (byte) 0xC1;
        overlong[x + 1] = (byte) 0x98;
        System.arraycopy(bytes, x + 1, overlong, x + 2, bytes.length - x - 1);
        return overlong;
    }
}
