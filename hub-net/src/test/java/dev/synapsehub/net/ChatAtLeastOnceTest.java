package dev.synapsehub.net;

import dev.synapsehub.client.HubClient;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;

import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * INV-DG-1 over a real loopback WebSocket: chat never consumes an {@code idem_key} (a retry with
 * the same key and the same {@code client_msg_id} is a second chat, not a replay or a conflict),
 * and the kept {@code client_msg_id} is echoed on every copy and on the delivery receipt.
 */
class ChatAtLeastOnceTest {

    private static ObjectNode chat(HubClient c, String target, String payload) {
        ObjectNode f = c.frame("chat");
        f.put("target", target);
        f.put("payload", payload);
        f.put("idem_key", "same-key");
        f.put("client_msg_id", "m-42");
        return f;
    }

    @Test
    void aRetriedChatWithTheSameIdemKeyIsDeliveredAgain() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient a = hub.agent("p/alpha");
            HubClient b = hub.agent("p/beta");
            a.clearPending();
            a.send(chat(a, "all", "hello"));
            a.send(chat(a, "all", "hello"));
            ObjectNode first = b.awaitType("chat", WAIT);
            ObjectNode second = b.awaitType("chat", WAIT);
            assertThat(first.path("msg_id").asLong()).isEqualTo(1);
            assertThat(second.path("msg_id").asLong()).isEqualTo(2);
            assertThat(first.path("client_msg_id").asText()).isEqualTo("m-42");
            assertThat(second.path("client_msg_id").asText()).isEqualTo("m-42");
            assertThat(a.awaitType("chat", WAIT).path("msg_id").asLong()).isEqualTo(1);
            assertThat(a.awaitType("chat", WAIT).path("msg_id").asLong()).isEqualTo(2);

            ObjectNode directed = chat(a, "p/beta", "for you");
            directed.put("receipt_requested", true);
            a.send(directed);
            a.send(directed);
            for (long id : new long[] {3, 4}) {
                assertThat(b.awaitType("chat", WAIT).path("msg_id").asLong()).isEqualTo(id);
                ObjectNode receipt = a.awaitType("delivery_receipt", WAIT);
                assertThat(receipt.path("message_id").asLong()).isEqualTo(id);
                assertThat(receipt.path("delivered").asBoolean()).isTrue();
                assertThat(receipt.path("client_msg_id").asText()).isEqualTo("m-42");
            }
            assertThat(a.pending()).noneMatch(f -> "error".equals(f.path("type").asText()));
            assertThat(b.pending()).noneMatch(f -> "error".equals(f.path("type").asText()));
        }
    }
}
