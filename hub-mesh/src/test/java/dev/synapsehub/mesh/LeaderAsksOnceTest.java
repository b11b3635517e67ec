package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.ratis.client.RaftClientRpc;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.AlreadyClosedException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An ask of the leader ({@link LeaderAsks}) runs at most once when its answer is lost: the
 * leader took it and ran its handler (an operator's {@code multihub_recover}, which has no
 * idem_key), then the stream closed before the answer came back, and the asker sent it again.
 * The sides talk through a Raft client that hands each request to the addressed node's state
 * machine side ({@link LeaderAsks#forwarded}) and loses the first answer as a closed stream does.
 */
class LeaderAsksOnceTest {
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    private final RaftGroupId group = RaftGroupId.randomId();
    /** The nodes the client reaches, by id. */
    private final Map<String, LeaderAsks> nodes = new java.util.concurrent.ConcurrentHashMap<>();
    /** Every request sent, as the addressed node and the ask it carried. */
    private final List<Sent> sent = new CopyOnWriteArrayList<>();
    /** How many answers the client still loses (a stream closed after the ask left). */
    private final AtomicInteger answersToLose = new AtomicInteger(1);
    /** Handlers run, per node. */
    private final Map<String, AtomicInteger> runs = new java.util.concurrent.ConcurrentHashMap<>();

    private record Sent(String to, JsonNode ask) {
    }

    @AfterEach
    void stop() {
        scheduler.shutdownNow();
    }

    /** A Raft client that hands each ask to the node it is addressed to; the first answers are lost on the way back. */
    private RaftClientRpc rpc() {
        return (RaftClientRpc) Proxy.newProxyInstance(RaftClientRpc.class.getClassLoader(),
                new Class<?>[]{RaftClientRpc.class}, (proxy, method, args) -> {
                    if (method.getName().equals("sendRequestAsyncUnordered")) {
                        RaftClientRequest r = (RaftClientRequest) args[0];
                        JsonNode ask = MeshJson.tree(r.getMessage().getContent().toByteArray());
                        String to = r.getServerId().toString();
                        sent.add(new Sent(to, ask));
                        return nodes.get(to).forwarded(ask).thenApply(m -> {
                            if (answersToLose.getAndDecrement() > 0) {
                                // the node took it and answered; the stream closed before the answer arrived
                                throw new java.util.concurrent.CompletionException(new AlreadyClosedException(
                                        "client->" + to + ": Stream completed: no reply for async request"));
                            }
                            return RaftClientReply.newBuilder().setRequest(r).setSuccess().setMessage(m).build();
                        });
                    }
                    if (method.getName().equals("handleException")) {
                        return false; // nothing to reconnect here
                    }
                    if (method.getName().equals("close")) {
                        return null;
                    }
                    throw new UnsupportedOperationException(method.getName());
                });
    }

    /** A node serving {@code multihub_recover}, each run recorded, while {@code leads} holds. */
    private LeaderAsks node(String id, AtomicBoolean leads, long retainMillis) {
        LeaderAsks n = new LeaderAsks(id, group, null, () -> RaftPeerId.valueOf(id), leads::get, scheduler,
                LeaderAsks.GAP_MILLIS, retainMillis);
        AtomicInteger ran = runs.computeIfAbsent(id, k -> new AtomicInteger());
        n.serve("multihub_recover", body -> CompletableFuture.completedFuture(MeshJson.MAPPER.createObjectNode()
                .put("recovered", true).put("recorded", id + "#" + ran.incrementAndGet())));
        nodes.put(id, n);
        return n;
    }

    private LeaderAsks asker(AtomicReference<String> leader) {
        return new LeaderAsks("n2", group, rpc(), () -> leader.get() == null ? null : RaftPeerId.valueOf(leader.get()),
                () -> false, scheduler);
    }

    private static ObjectNode recover() {
        return MeshJson.MAPPER.createObjectNode().put("peer", "hub-b").put("operator", "ops").put("reason", "checked");
    }

    private int ran(String node) {
        return runs.getOrDefault(node, new AtomicInteger()).get();
    }

    @Test
    void aResendWhoseFirstAnswerWasLostGetsThatAnswerAndRunsNothingAgain() throws Exception {
        node("n1", new AtomicBoolean(true), LeaderAsks.RETAIN_MILLIS);
        LeaderAsks asker = asker(new AtomicReference<>("n1"));

        ObjectNode answer = asker.ask("multihub_recover", recover(), Duration.ofSeconds(20)).get(20, TimeUnit.SECONDS);

        assertThat(ran("n1")).as("the leader ran the recovery once, though the ask reached it twice").isEqualTo(1);
        assertThat(answer.path("recorded").asText()).as("the first run's answer").isEqualTo("n1#1");
        assertThat(sent).hasSize(2);
        assertThat(sent.get(1).ask().path(LeaderAsks.RESENT).asBoolean()).as("marked as a resend").isTrue();
        assertThat(sent.get(1).ask().path("seq").asLong()).isEqualTo(sent.get(0).ask().path("seq").asLong());
    }

    @Test
    void aResendGoesOnlyToTheNodeItMayHaveReachedWhichAnswersItAlsoAfterLosingTheLead() throws Exception {
        AtomicBoolean n1Leads = new AtomicBoolean(true);
        node("n1", n1Leads, LeaderAsks.RETAIN_MILLIS);
        node("n3", new AtomicBoolean(true), LeaderAsks.RETAIN_MILLIS);
        AtomicReference<String> leader = new AtomicReference<>("n1");
        // n1 runs the recovery, then loses the lead to n3 before its answer could arrive
        nodes.get("n1").serve("multihub_recover", body -> {
            runs.get("n1").incrementAndGet();
            n1Leads.set(false);
            leader.set("n3");
            return CompletableFuture.completedFuture(MeshJson.MAPPER.createObjectNode().put("recorded", "n1#1"));
        });
        LeaderAsks asker = asker(leader);

        ObjectNode answer = asker.ask("multihub_recover", recover(), Duration.ofSeconds(20)).get(20, TimeUnit.SECONDS);

        assertThat(ran("n3")).as("the new leader never ran what the old one had run").isZero();
        assertThat(ran("n1")).isEqualTo(1);
        assertThat(answer.path("recorded").asText()).isEqualTo("n1#1");
        assertThat(sent).extracting(Sent::to).containsExactly("n1", "n1");
    }

    @Test
    void aResendTheNodeNeverTookGoesOnToTheLeaderOnceThatNodeSaysItDoesNotLead() throws Exception {
        AtomicBoolean n1Leads = new AtomicBoolean(false); // n1 refuses it as not leading: no handler sees it
        node("n1", n1Leads, 0); // retaining nothing: it has been up longer than any resend could take
        node("n3", new AtomicBoolean(true), LeaderAsks.RETAIN_MILLIS);
        AtomicReference<String> leader = new AtomicReference<>("n1");
        answersToLose.set(1);
        LeaderAsks asker = asker(leader);
        CompletableFuture<ObjectNode> asked = asker.ask("multihub_recover", recover(), Duration.ofSeconds(20));
        leader.set("n3");

        ObjectNode answer = asked.get(20, TimeUnit.SECONDS);

        assertThat(ran("n1")).isZero();
        assertThat(ran("n3")).isEqualTo(1);
        assertThat(answer.path("recorded").asText()).isEqualTo("n3#1");
        assertThat(sent).extracting(Sent::to).containsExactly("n1", "n1", "n3");
    }

    @Test
    void aNodeThatStartedTooRecentlyToKnowRefusesAResentAskItHasNoAnswerForAndRunsNothing() throws Exception {
        LeaderAsks restarted = node("n1", new AtomicBoolean(true), LeaderAsks.RETAIN_MILLIS);
        ObjectNode resent = new LeaderAsks("n2", group, null, () -> null, () -> false, scheduler)
                .request("multihub_recover", recover()).put(LeaderAsks.RESENT, true);

        JsonNode answer = MeshJson.tree(restarted.forwarded(resent).get(5, TimeUnit.SECONDS).getContent().toByteArray());

        assertThat(answer.path("error").asText()).startsWith("outcome unknown");
        assertThat(ran("n1")).as("its previous life may have run it").isZero();
    }

    @Test
    void pastTheAnswersKeptTheOldestGoAndAResendOfOneIsRefusedNotRunAgain() throws Exception {
        LeaderAsks leader = node("n1", new AtomicBoolean(true), LeaderAsks.RETAIN_MILLIS);
        LeaderAsks origin = new LeaderAsks("n2", group, null, () -> null, () -> false, scheduler);
        ObjectNode first = origin.request("multihub_recover", recover());
        leader.forwarded(first).get(5, TimeUnit.SECONDS);
        for (int i = 0; i < LeaderAsks.ANSWERS_KEPT; i++) {
            leader.forwarded(origin.request("multihub_recover", recover())).get(5, TimeUnit.SECONDS);
        }
        assertThat(leader.failures().answersForgotten()).isEqualTo(1);

        JsonNode again = MeshJson.tree(leader.forwarded(first.deepCopy().put(LeaderAsks.RESENT, true))
                .get(5, TimeUnit.SECONDS).getContent().toByteArray());

        assertThat(again.path("error").asText()).startsWith("outcome unknown");
        assertThat(ran("n1")).isEqualTo(LeaderAsks.ANSWERS_KEPT + 1);
    }
}
