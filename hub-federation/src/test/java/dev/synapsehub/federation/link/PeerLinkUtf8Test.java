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
import dev.synapsehub.federation.testing.Pki;
import dev.synapsehub.net.HubConfig;
import dev.synapsehub.net.HubServer;
import dev.synapsehub.net.extension.HubExtension;
import dev.synapsehub.net.extension.HubExtensions;
import dev.synapsehub.net.tls.TlsFiles;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The peer link checks each frame's UTF-8 itself (Netty's validator is off for speed): a reply
 * that is not well-formed UTF-8 (here an overlong encoding, which Jackson would read) fails the
 * request and drops the connection, as RFC 6455 §8.1 requires; a well-formed one is answered.
 */
class PeerLinkUtf8Test {
    private static final Duration WAIT = Duration.ofSeconds(20);

    @TempDir
    Path dir;

    @Test
    void aReplyThatIsNotWellFormedUtf8FailsTheRequestAndTheNextOneReconnects() throws Exception {
        Pki.HubCerts b = new Pki(dir).hub("hub-b");
        CoordinationActor actor = new CoordinationActor(new CoordinationState(), new InMemoryJournal(), Clock.system(),
                ActorSettings.DEFAULTS);
        actor.start();
        HubExtension peer = new AnsweringExtension("multihub_log_request"::equals, (hub, r) -> {
            boolean bad = r.frame().path("after_seq").asLong() == 1;
            byte[] text = ("{\"type\":\"multihub_log_snapshot\",\"payload\":\"X\",\"events\":[],\"next_cursor\":0,"
                    + "\"log_end_seq\":0}").getBytes(StandardCharsets.UTF_8);
            if (bad) {
                int x = new String(text, StandardCharsets.UTF_8).indexOf('X');
                byte[] overlong = new byte[text.length + 1];
                System.arraycopy(text, 0, overlong, 0, x);
                overlong[x] = (byte) 0xC1; // an overlong two-byte form of 'X'
                overlong[x + 1] = (byte) 0x98;
                System.arraycopy(text, x + 1, overlong, x + 2, text.length - x - 1);
                text = overlong;
            }
            hub.outbox().sendInOrder(r.session(), Unpooled.wrappedBuffer(text));
        });
        HubServer server = new HubServer(HubConfig.builder().host("127.0.0.1").port(0).hubId("hub-b")
                .tls(new TlsFiles(b.serverFiles().cert(), b.serverFiles().key(), null)).build(), actor, Clock.system(),
                null, new HubExtensions(List.of(peer)));
        server.start();
        try (PeerLink link = new PeerLink("hub-b", URI.create("wss://127.0.0.1:" + server.boundPort() + "/"),
                ClientTls.pinned(b.server().pin()), "hub-a", null, WAIT)) {
            assertThatThrownBy(() -> link.request(request(1), "multihub_log_snapshot", WAIT)
                    .get(WAIT.toSeconds() * 2, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class);
            ObjectNode ok = link.request(request(2), "multihub_log_snapshot", WAIT).get(WAIT.toSeconds() * 2, TimeUnit.SECONDS);
            assertThat(ok.path("payload").asText()).isEqualTo("X");
        } finally {
            server.close();
            actor.close();
        }
    }

    private static ObjectNode request(long after) {
        ObjectNode request = JsonNodeFactory.instance.objectNode();
        request.put("type", "multihub_log_request");
        request.put("target", "all");
        request.put("after_seq", after);
        return request;
    }
}
