package dev.synapsehub.net;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/** {@code who_snapshot.mailbox_pending} membership (contract A11 M1) over a real loopback socket. */
class MailboxPendingWireTest {
    @TempDir
    Path dir;

    private static JsonNode pending(HubClient c) throws Exception {
        c.send(c.frame("who_request"));
        return c.awaitType("who_snapshot", WAIT).path("mailbox_pending");
    }

    private static List<String> keys(JsonNode object) {
        List<String> out = new ArrayList<>();
        object.fieldNames().forEachRemaining(out::add);
        return out;
    }

    @Test
    void onlineIdentitiesAreListedWithZeroAndStayAfterTheyLeave() throws Exception {
        try (TestHub hub = TestHub.journaled(dir.resolve("hub.db"))) {
            HubClient alice = hub.agent("p/alice");
            HubClient bob = hub.agent("p/bob");
            HubClient bobWaiter = hub.agent("p/bob-rx");
            hub.agent("p/pan-pane-rx");

            JsonNode first = pending(alice);
            assertThat(first.isObject()).isTrue();
            assertThat(keys(first)).containsExactly("p/alice", "p/bob", "p/pan");
            first.forEach(count -> assertThat(count.asInt()).isZero());

            ObjectNode chat = alice.frame("chat");
            chat.put("target", "p/carol").put("payload", "for later");
            alice.send(chat);
            alice.awaitType("chat", WAIT); // the sender's echo: committed
            JsonNode second = pending(alice);
            assertThat(keys(second)).containsExactly("p/alice", "p/bob", "p/carol", "p/pan");
            assertThat(second.path("p/carol").asInt()).isEqualTo(1);

            bob.close();
            bobWaiter.close();
            alice.await(f -> "presence_update".equals(f.path("type").asText())
                    && "p/bob".equals(f.path("agent").asText()) && "left".equals(f.path("event").asText()), WAIT);
            alice.await(f -> "presence_update".equals(f.path("type").asText())
                    && "p/bob-rx".equals(f.path("agent").asText()) && "left".equals(f.path("event").asText()), WAIT);
            JsonNode third = pending(alice);
            assertThat(third.has("p/bob")).as("a known identity stays after it disconnects").isTrue();
            assertThat(third.path("p/bob").asInt()).isZero();
        }
    }

    @Test
    void aNameThatOnlyConnectedAndLeftBeforeAnyWhoIsNotListed() throws Exception {
        try (TestHub hub = TestHub.journaled(dir.resolve("hub.db"))) {
            HubClient alice = hub.agent("p/alice");
            HubClient passer = hub.agent("p/passer");
            passer.close();
            alice.await(f -> "presence_update".equals(f.path("type").asText())
                    && "p/passer".equals(f.path("agent").asText()) && "left".equals(f.path("event").asText()), WAIT);
            assertThat(keys(pending(alice))).containsExactly("p/alice");
        }
    }

    @Test
    void withoutAJournalTheMemberIsNull() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient alice = hub.agent("p/alice");
            JsonNode p = pending(alice);
            assertThat(p.isNull()).isTrue();
        }
    }
}
