package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.ratis.client.RaftClientRpc;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.AlreadyClosedException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.ConnectException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An asking node resets its channel to a node once per broken channel, as its forwards do
 * ({@link ChannelResets}): a reset fails every ask then on the channel with "Stream close: no
 * reply", which pins each to that node though none of them had left. And an ask pinned to a node
 * that now refuses connections fails as unknown at once: that node is down, and restarted it would
 * refuse the resend anyway. The Raft client here behaves as Ratis' does towards a dead node: one
 * stream per channel, a stream that fails fails every request on it, a reset closes it.
 */
class LeaderAsksChannelTest {
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    private final RaftGroupId group = RaftGroupId.randomId();

    @AfterEach
    void stop() {
        scheduler.shutdownNow();
    }

    /** Ratis' client towards n1 (whose node died), and n3 in this JVM. */
    private static final class DeadNodeRpc implements RaftClientRpc {
        private final LeaderAsks n3;
        /** Requests on n1's current channel, not yet failed. */
        private List<CompletableFuture<RaftClientReply>> channel = new ArrayList<>();
        /** The next sends to n1 Ratis refuses unsent on the ended stream, failed when the test says. */
        final List<CompletableFuture<RaftClientReply>> refusedUnsent = new CopyOnWriteArrayList<>();
        final AtomicInteger refuseNext = new AtomicInteger();
        final AtomicInteger resets = new AtomicInteger();
        final List<JsonNode> sentToN1 = new CopyOnWriteArrayList<>();

        DeadNodeRpc(LeaderAsks n3) {
            this.n3 = n3;
        }

        @Override
        public CompletableFuture<RaftClientReply> sendRequestAsyncUnordered(RaftClientRequest r) {
            JsonNode ask = MeshJson.tree(r.getMessage().getContent().toByteArray());
            if (r.getServerId().toString().equals("n3")) {
                return n3.forwarded(ask).thenApply(m ->
                        RaftClientReply.newBuilder().setRequest(r).setSuccess().setMessage(m).build());
            }
            sentToN1.add(ask);
            CompletableFuture<RaftClientReply> f = new CompletableFuture<>();
            if (refuseNext.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                refusedUnsent.add(f);
                return f;
            }
            synchronized (this) {
                channel.add(f);
            }
            return f;
        }

        /** n1's stream fails: every request on it fails with {@code failure} (Ratis' replies map, emptied at once). */
        void streamFails(Throwable failure) {
            List<CompletableFuture<RaftClientReply>> on;
            synchronized (this) {
                on = channel;
                channel = new ArrayList<>();
            }
            on.forEach(f -> f.completeExceptionally(failure));
        }

        synchronized int onChannel() {
            return channel.size();
        }

        @Override
        public boolean handleException(RaftPeerId serverId, Throwable t, boolean reconnect) {
            resets.incrementAndGet();
            streamFails(new AlreadyClosedException("client->n1: Stream close: no reply for async request"));
            return true;
        }

        @Override
        public RaftClientReply sendRequest(RaftClientRequest request) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void addRaftPeers(java.util.Collection<RaftPeer> peers) {
        }

        @Override
        public void close() {
        }
    }

    private static void await(String what, java.util.function.BooleanSupplier done) throws InterruptedException {
        for (int i = 0; i < 1000 && !done.getAsBoolean(); i++) {
            Thread.sleep(10);
        }
        assertThat(done.getAsBoolean()).as(what).isTrue();
    }

    private LeaderAsks n3() {
        LeaderAsks n3 = new LeaderAsks("n3", group, null, () -> RaftPeerId.valueOf("n3"), () -> true, scheduler);
        AtomicInteger ran = new AtomicInteger();
        n3.serve("claim_forward", body -> CompletableFuture.completedFuture(
                MeshJson.MAPPER.createObjectNode().put("forwarded_by", "n3#" + ran.incrementAndGet())));
        return n3;
    }

    @Test
    void twoAsksRefusedOnTheDeadLeadersEndedStreamResetItOnceAndTheAskOnTheNewChannelGoesToTheNewLeader()
            throws Exception {
        DeadNodeRpc rpc = new DeadNodeRpc(n3());
        AtomicReference<String> leader = new AtomicReference<>("n1");
        LeaderAsks asker = new LeaderAsks("n2", group, rpc, () -> RaftPeerId.valueOf(leader.get()), () -> false,
                scheduler);
        rpc.refuseNext.set(2);
        CompletableFuture<ObjectNode> x = asker.ask("claim_forward", MeshJson.MAPPER.createObjectNode(),
                Duration.ofSeconds(30));
        CompletableFuture<ObjectNode> z = asker.ask("claim_forward", MeshJson.MAPPER.createObjectNode(),
                Duration.ofSeconds(30));
        rpc.refusedUnsent.get(0).completeExceptionally(new AlreadyClosedException("client->n1 is closed."));
        assertThat(rpc.resets.get()).as("the ended stream's channel is reset").isEqualTo(1);

        CompletableFuture<ObjectNode> y = asker.ask("claim_forward", MeshJson.MAPPER.createObjectNode(),
                Duration.ofSeconds(30));
        await("y went out on the new channel", () -> rpc.sentToN1.size() >= 3 && rpc.onChannel() >= 1);
        // z's refusal is handled only now: its channel is gone already, and y is on the new one
        rpc.refusedUnsent.get(1).completeExceptionally(new AlreadyClosedException("client->n1 is closed."));
        assertThat(rpc.resets.get()).as("one reset for one ended stream").isEqualTo(1);

        await("x and z sent again on the new channel, with y", () -> rpc.onChannel() == 3);
        // the election names n3; the new channel to n1 cannot connect, and fails what it holds
        leader.set("n3");
        rpc.streamFails(new IOException(new ConnectException("Connection refused: /127.0.0.1:1")));

        assertThat(y.get(10, TimeUnit.SECONDS).path("forwarded_by").asText()).as("y never left: n3 takes it")
                .startsWith("n3#");
        assertThat(x.get(10, TimeUnit.SECONDS).path("forwarded_by").asText()).startsWith("n3#");
        assertThat(z.get(10, TimeUnit.SECONDS).path("forwarded_by").asText()).startsWith("n3#");
        assertThat(rpc.resets.get()).as("and one for the channel that could not connect").isEqualTo(2);
    }

    @Test
    void anAskPinnedToANodeThatNowRefusesConnectionsFailsAsUnknownAtOnce() throws Exception {
        DeadNodeRpc rpc = new DeadNodeRpc(n3());
        AtomicReference<String> leader = new AtomicReference<>("n1");
        LeaderAsks asker = new LeaderAsks("n2", group, rpc, () -> RaftPeerId.valueOf(leader.get()), () -> false,
                scheduler);
        CompletableFuture<ObjectNode> ask = asker.ask("claim_forward", MeshJson.MAPPER.createObjectNode(),
                Duration.ofSeconds(30));
        await("sent", () -> rpc.onChannel() == 1);
        leader.set("n3");
        // n1 died with the ask on its stream: it may have run there, so it is resent to n1 alone
        rpc.streamFails(new AlreadyClosedException("client->n1: Stream completed: no reply for async request"));
        await("resent to n1", () -> rpc.onChannel() == 1);
        assertThat(rpc.sentToN1.get(1).path(LeaderAsks.RESENT).asBoolean(false)).isTrue();
        rpc.streamFails(new IOException(new ConnectException("Connection refused: /127.0.0.1:1")));

        try {
            ask.get(10, TimeUnit.SECONDS);
            throw new AssertionError("the ask did not fail");
        } catch (ExecutionException e) {
            assertThat(e.getCause()).isInstanceOf(IOException.class)
                    .hasMessageContaining("n1").hasMessageContaining("may or may not have run");
        }
        assertThat(rpc.sentToN1).as("not resent to the down node, nor sent to n3").hasSize(2);
    }
}
