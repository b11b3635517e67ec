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

/**
 * Client members of a chat reach recipients (contract A6, decision A10.2) over a real loopback
 * socket: a streamed reply ({@code kind}, {@code stream_id}, {@code frame_type}, {@code text},
 * {@code seq}) can be reassembled by its receiver with and without a journal.
 */
class ChatPassThroughWireTest {
    private static final String[] TYPES = {"open", "chunk", "chunk", "done"};
    private static final String[] TEXTS = {"", "Hello, ", "world", ""};

    @TempDir
    Path dir;

    /** The frames of the reference {@code stream_reply}: a chat per frame with the stream members. */
    private static void stream(HubClient sender, String target) {
        for (int i = 0; i < TYPES.length; i++) {
            ObjectNode f = sender.frame("chat");
            f.put("target", target).put("payload", TEXTS[i]).put("kind", "stream").put("stream_id", "s-42")
                    .put("seq", i).put("frame_type", TYPES[i]).put("text", TEXTS[i]).put("timestamp", 1000.5 + i);
            f.putObject("metadata").put("model", "m").putArray("tags").add(1).add("x");
            sender.send(f);
        }
    }

    private static List<ObjectNode> streamFrames(HubClient receiver) throws Exception {
        List<ObjectNode> got = new ArrayList<>();
        for (int i = 0; i < TYPES.length; i++) {
            got.add(receiver.await(f -> "chat".equals(f.path("type").asText())
                    && "s-42".equals(f.path("stream_id").asText()) && !got.contains(f), WAIT));
        }
        return got;
    }

    private static void assertStreamMembers(List<ObjectNode> frames) {
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < frames.size(); i++) {
            ObjectNode f = frames.get(i);
            assertThat(f.path("kind").asText()).isEqualTo("stream");
            assertThat(f.path("frame_type").asText()).isEqualTo(TYPES[i]);
            assertThat(f.path("client_timestamp").asDouble()).isEqualTo(1000.5 + i);
            assertThat(f.path("metadata").path("tags").toString()).isEqualTo("[1,\"x\"]");
            assertThat(f.path("sender").asText()).isEqualTo("p/alice");
            text.append(f.path("text").asText());
        }
        assertThat(text.toString()).isEqualTo("Hello, world");
    }

    @Test
    void withoutAJournalRecipientsGetTheClientsSeqAndEveryStreamMember() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient alice = hub.agent("p/alice");
            HubClient bob = hub.agent("p/bob");
            for (String target : new String[] {"p/bob", "all"}) {
                bob.clearPending();
                stream(alice, target);
                List<ObjectNode> frames = streamFrames(bob);
                assertStreamMembers(frames);
                for (int i = 0; i < frames.size(); i++) {
                    assertThat(frames.get(i).path("seq").isIntegralNumber()).isTrue();
                    assertThat(frames.get(i).path("seq").asLong()).as(target).isEqualTo(i);
                }
            }
            alice.send(alice.frame("history_request"));
            JsonNode history = alice.awaitType("history_snapshot", WAIT).path("history");
            assertThat(history.get(history.size() - 1).path("seq").asLong()).isEqualTo(3);
        }
    }

    @Test
    void withAJournalLiveSeqIsTheJournalSeqAndHistoryKeepsTheClientsOwn() throws Exception {
        try (TestHub hub = TestHub.journaled(dir.resolve("hub.db"))) {
            HubClient alice = hub.agent("p/alice");
            HubClient bob = hub.agent("p/bob");
            stream(alice, "p/bob");
            List<ObjectNode> frames = streamFrames(bob);
            assertStreamMembers(frames);
            long previous = 0;
            for (ObjectNode f : frames) {
                long seq = f.path("seq").asLong();
                assertThat(seq).isGreaterThan(previous); // journal seqs: strictly increasing, in stream order
                previous = seq;
                assertThat(f.toString().split("\"seq\"", -1)).as("one seq member").hasSize(2);
            }
            // an ack names the journal seq of the frame it consumed
            ObjectNode ack = bob.frame("ack");
            ack.put("seq", previous);
            bob.send(ack);

            alice.send(alice.frame("history_request"));
            JsonNode history = alice.awaitType("history_snapshot", WAIT).path("history");
            List<Long> clientSeqs = new ArrayList<>();
            history.forEach(h -> {
                if ("s-42".equals(h.path("stream_id").asText())) {
                    clientSeqs.add(h.path("seq").asLong());
                }
            });
            assertThat(clientSeqs).containsExactly(0L, 1L, 2L, 3L);
        }
    }

    @Test
    void aSeqThatIsNotAnIntegerNeverFailsTheChat() throws Exception {
        for (boolean journaled : new boolean[] {false, true}) {
            try (TestHub hub = journaled ? TestHub.journaled(dir.resolve("odd.db")) : TestHub.open()) {
                HubClient alice = hub.agent("p/alice");
                HubClient bob = hub.agent("p/bob");
                String[] odd = {"null", "\"abc\"", "\"1.5\"", "{\"n\":1}", "true"};
                for (int i = 0; i < odd.length; i++) {
                    alice.sendText("{\"type\":\"chat\",\"sender\":\"p/alice\",\"target\":\"p/bob\",\"payload\":\"odd-"
                            + i + "\",\"seq\":" + odd[i] + "}");
                    String payload = "odd-" + i;
                    ObjectNode got = bob.await(f -> payload.equals(f.path("payload").asText()), WAIT);
                    if (journaled) {
                        assertThat(got.path("seq").isIntegralNumber()).as(odd[i]).isTrue();
                    } else {
                        assertThat(got.path("seq").toString()).as(odd[i]).isEqualTo(odd[i].replace(" ", ""));
                    }
                }
                assertThat(alice.isOpen()).isTrue();
            }
        }
    }
}
