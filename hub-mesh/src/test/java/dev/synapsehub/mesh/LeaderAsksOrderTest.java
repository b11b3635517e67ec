package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The leader's side of {@link LeaderAsks}: one node's asks reach the handler in the order the
 * node made them, whatever order Ratis' pool delivers them in; a gap is not waited for forever;
 * a resend of an ask still being handled joins it; a node that does not lead hands nothing over.
 */
class LeaderAsksOrderTest {
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    private final AtomicBoolean leads = new AtomicBoolean(true);
    /** A gap is waited for a minute here, so a slow machine never lets a later ask pass an earlier one. */
    private LeaderAsks asks = asks(60_000);
    private final List<String> handed = new CopyOnWriteArrayList<>();
    private final List<CompletableFuture<ObjectNode>> pending = new CopyOnWriteArrayList<>();

    private LeaderAsks asks(long gapMillis) {
        LeaderAsks a = new LeaderAsks("n1", RaftGroupId.randomId(), null, () -> RaftPeerId.valueOf("n1"), leads::get,
                scheduler, gapMillis);
        a.serve("echo", body -> {
            handed.add(body.path("id").asText());
            CompletableFuture<ObjectNode> f = new CompletableFuture<>();
            pending.add(f);
            return f;
        });
        return a;
    }

    @AfterEach
    void stop() {
        scheduler.shutdownNow();
    }

    @Test
    void oneNodesAsksAreHandedOverInItsOrderWhateverOrderTheyArrive() throws Exception {
        asks.forwarded(ask("n2", 1, "a"));
        asks.forwarded(ask("n2", 3, "c"));
        asks.forwarded(ask("n3", 7, "x")); // another node's asks do not wait on n2's
        assertThat(handed).containsExactly("a", "x");
        asks.forwarded(ask("n2", 2, "b"));
        assertThat(handed).containsExactly("a", "x", "b", "c");
    }

    @Test
    void anAskThatNeverComesIsNotWaitedForForever() throws Exception {
        asks = asks(LeaderAsks.GAP_MILLIS);
        asks.forwarded(ask("n2", 1, "a"));
        asks.forwarded(ask("n2", 3, "c")); // 2 is lost
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (handed.size() < 2 && System.nanoTime() < deadline) {
            TimeUnit.MILLISECONDS.sleep(20); // a pause between looks, not a wait for an outcome
        }
        assertThat(handed).containsExactly("a", "c");
        asks.forwarded(ask("n2", 2, "b")); // late after all: at once, never held behind later ones
        assertThat(handed).containsExactly("a", "c", "b");
    }

    @Test
    void aResendOfAnAskStillBeingHandledJoinsIt() throws Exception {
        CompletableFuture<Message> first = asks.forwarded(ask("n2", 1, "a"));
        CompletableFuture<Message> again = asks.forwarded(ask("n2", 1, "a"));
        assertThat(handed).containsExactly("a");
        ObjectNode result = MeshJson.MAPPER.createObjectNode().put("ok", 1);
        pending.get(0).complete(result);
        JsonNode a = MeshJson.tree(first.get(5, TimeUnit.SECONDS).getContent().toByteArray());
        JsonNode b = MeshJson.tree(again.get(5, TimeUnit.SECONDS).getContent().toByteArray());
        assertThat(a.path("answer")).isEqualTo(result);
        assertThat(b.path("answer")).isEqualTo(result);
    }

    @Test
    void aNodeThatDoesNotLeadHandsNothingOverAndSaysSo() throws Exception {
        leads.set(false);
        JsonNode answer = MeshJson.tree(asks.forwarded(ask("n2", 1, "a")).get(5, TimeUnit.SECONDS)
                .getContent().toByteArray());
        assertThat(answer.path("not_leading").asBoolean()).isTrue();
        assertThat(handed).isEmpty();
    }

    @Test
    void thisNodesOwnAskIsHandledHereWhenItLeads() throws Exception {
        ObjectNode body = MeshJson.MAPPER.createObjectNode().put("id", "own");
        CompletableFuture<ObjectNode> answer = asks.ask("echo", body, Duration.ofSeconds(5));
        assertThat(handed).containsExactly("own");
        pending.get(0).complete(MeshJson.MAPPER.createObjectNode().put("ok", 2));
        assertThat(answer.get(5, TimeUnit.SECONDS).path("ok").asInt()).isEqualTo(2);
    }

    private static ObjectNode ask(String origin, long seq, String id) {
        ObjectNode request = MeshJson.MAPPER.createObjectNode();
        request.put("protocol", MeshProtocol.PROTOCOL);
        request.put("version", MeshProtocol.VERSION);
        request.put(LeaderAsks.SERVICE, "echo");
        request.put("origin", origin);
        request.put("seq", seq);
        request.set("body", MeshJson.MAPPER.createObjectNode().put("id", id));
        return request;
    }
}
