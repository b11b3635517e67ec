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
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The leader's side of {@link LeaderAsks}: one node's asks reach the handler in the order the
 * node made them, whatever order Ratis' pool delivers them in; a gap is not waited for forever;
 * a resend of an ask still being handled joins it, a restarted node's never joins its previous life's;
 * a node that does not lead hands nothing over, held asks included.
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

    @Test
    void aRestartedNodesAskOneNeitherJoinsNorWaitsBehindWhatItsPreviousLifeAsked() throws Exception {
        LeaderAsks before = asker("n2");
        LeaderAsks after = asker("n2"); // the same node, restarted: its numbers start at 1 again
        CompletableFuture<Message> alice = asks.forwarded(before.request("echo", body("alice")));
        asks.forwarded(before.request("echo", body("a2")));
        asks.forwarded(before.request("echo", body("a3")));
        CompletableFuture<Message> bob = asks.forwarded(after.request("echo", body("bob"))); // seq 1 again
        assertThat(handed).containsExactly("alice", "a2", "a3", "bob");
        pending.get(0).complete(MeshJson.MAPPER.createObjectNode().put("for", "alice"));
        pending.get(3).complete(MeshJson.MAPPER.createObjectNode().put("for", "bob"));
        assertThat(answer(alice).path("answer").path("for").asText()).isEqualTo("alice");
        assertThat(answer(bob).path("answer").path("for").asText()).isEqualTo("bob");
        // the new life's order starts afresh: its 3 waits for its 2, whatever the old life reached
        ObjectNode two = after.request("echo", body("b2"));
        ObjectNode three = after.request("echo", body("b3"));
        asks.forwarded(three);
        assertThat(handed).containsExactly("alice", "a2", "a3", "bob");
        asks.forwarded(two);
        assertThat(handed).containsExactly("alice", "a2", "a3", "bob", "b2", "b3");
    }

    @Test
    void heldAsksAreRefusedNotHandedOverWhenTheLeadIsLost() throws Exception {
        asks.forwarded(ask("n2", 1, "a"));
        CompletableFuture<Message> held = asks.forwarded(ask("n2", 3, "c"));
        leads.set(false);
        asks.leadershipChanged();
        assertThat(answer(held).path("not_leading").asBoolean()).isTrue(); // its asker resends it to the new leader
        asks.forwarded(ask("n2", 2, "b"));
        assertThat(handed).containsExactly("a");
    }

    @Test
    void anAskLetGoAfterAGapOnANodeThatLostTheLeadIsRefused() throws Exception {
        asks = asks(LeaderAsks.GAP_MILLIS);
        asks.forwarded(ask("n2", 1, "a"));
        CompletableFuture<Message> held = asks.forwarded(ask("n2", 3, "c")); // 2 is lost
        leads.set(false); // the lead is gone before the node heard of the change
        assertThat(answer(held).path("not_leading").asBoolean()).isTrue();
        assertThat(handed).containsExactly("a");
    }

    @Test
    void aGapTimerWhoseOrderALeadershipChangeLetGoOfFindsNothingToDo() throws Exception {
        asks = asks(LeaderAsks.GAP_MILLIS);
        asks.forwarded(ask("n2", 1, "a"));
        asks.forwarded(ask("n2", 3, "c")); // the gap timer starts
        asks.forwarded(ask("n2", 2, "b")); // nothing held any more; the timer still runs
        asks.leadershipChanged(); // still leading: the drained order is let go
        // the single scheduler thread runs this after the gap timer, which is due earlier
        scheduler.schedule(() -> { }, 2 * LeaderAsks.GAP_MILLIS, TimeUnit.MILLISECONDS).get(10, TimeUnit.SECONDS);
        assertThat(asks.taskFailures()).isZero();
        assertThat(handed).containsExactly("a", "b", "c");
    }

    @Test
    void aResendThatFailsIsCountedAndAnswered() throws Exception {
        AtomicBoolean looked = new AtomicBoolean();
        LeaderAsks asker = new LeaderAsks("n2", RaftGroupId.randomId(), null, () -> {
            if (looked.getAndSet(true)) {
                throw new IllegalStateException("no view of the group");
            }
            return null; // no leader yet: resent later
        }, () -> false, scheduler);
        CompletableFuture<ObjectNode> answer = asker.ask("echo", body("x"), Duration.ofSeconds(5));
        assertThatThrownBy(() -> answer.get(5, TimeUnit.SECONDS)).hasMessageContaining("no view of the group");
        assertThat(asker.taskFailures()).isEqualTo(1);
    }

    private LeaderAsks asker(String node) {
        return new LeaderAsks(node, RaftGroupId.randomId(), null, () -> null, () -> false, scheduler);
    }

    private static ObjectNode body(String id) {
        return MeshJson.MAPPER.createObjectNode().put("id", id);
    }

    private static JsonNode answer(CompletableFuture<Message> m) throws Exception {
        return MeshJson.tree(m.get(5, TimeUnit.SECONDS).getContent().toByteArray());
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
