package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.ratis.client.RaftClientRpc;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.client.GrpcClientRpc;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.AlreadyClosedException;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An ask sent to a leader that died since the node's last ask goes on to the new leader: Ratis'
 * gRPC client refuses it at once on the dead node's ended stream ("… is closed."), so it never
 * left this node and may go elsewhere. Were it taken for an ask that may have arrived, it would be
 * resent to the dead node alone until its bound, and the agent whose claim it carried refused.
 * The dead node is reached through Ratis' real gRPC client (a loopback port nobody listens on);
 * the new leader is a {@link LeaderAsks} in this JVM.
 */
class LeaderAsksDeadLeaderTest {
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    private final RaftGroupId group = RaftGroupId.randomId();
    private final GrpcClientRpc grpc = new GrpcClientRpc(ClientId.randomId(), new RaftProperties(), null, null);
    private final List<String> sentTo = new CopyOnWriteArrayList<>();

    @AfterEach
    void stop() throws Exception {
        scheduler.shutdownNow();
        grpc.close();
    }

    private static int deadPort() throws Exception {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private RaftClientRequest read(String to, long callId) {
        return RaftClientRequest.newBuilder().setClientId(ClientId.randomId()).setServerId(RaftPeerId.valueOf(to))
                .setGroupId(group).setCallId(callId).setMessage(Message.valueOf(ByteString.copyFromUtf8("{}")))
                .setType(AnyNodeRead.TYPE).setTimeoutMs(5_000).build();
    }

    private static Throwable failureOf(CompletableFuture<RaftClientReply> f) throws Exception {
        try {
            f.get(10, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            return e.getCause();
        }
        throw new AssertionError("the send did not fail");
    }

    @Test
    void anAskRefusedUnsentOnTheDeadLeadersEndedStreamGoesToTheNewLeader() throws Exception {
        grpc.addRaftPeers(List.of(RaftPeer.newBuilder().setId("n1").setAddress("127.0.0.1:" + deadPort()).build()));
        // the stream to n1 ends (its node died): every request on it since is refused unsent
        failureOf(grpc.sendRequestAsyncUnordered(read("n1", 1)));
        Throwable refused = failureOf(grpc.sendRequestAsyncUnordered(read("n1", 2)));
        assertThat(refused).as("Ratis' refusal on an ended stream, as this test needs it")
                .isInstanceOf(AlreadyClosedException.class).hasMessageEndingWith(" is closed.");

        LeaderAsks n3 = new LeaderAsks("n3", group, null, () -> RaftPeerId.valueOf("n3"), () -> true, scheduler);
        AtomicInteger ran = new AtomicInteger();
        n3.serve("claim_forward", body -> CompletableFuture.completedFuture(
                MeshJson.MAPPER.createObjectNode().put("forwarded_by", "n3#" + ran.incrementAndGet())));
        RaftClientRpc rpc = (RaftClientRpc) Proxy.newProxyInstance(RaftClientRpc.class.getClassLoader(),
                new Class<?>[]{RaftClientRpc.class}, (proxy, method, args) -> {
                    if (method.getName().equals("sendRequestAsyncUnordered")) {
                        RaftClientRequest r = (RaftClientRequest) args[0];
                        String to = r.getServerId().toString();
                        sentTo.add(to);
                        if (to.equals("n1")) {
                            return grpc.sendRequestAsyncUnordered(r); // the dead node, through the real client
                        }
                        JsonNode ask = MeshJson.tree(r.getMessage().getContent().toByteArray());
                        return n3.forwarded(ask).thenApply(m ->
                                RaftClientReply.newBuilder().setRequest(r).setSuccess().setMessage(m).build());
                    }
                    if (method.getName().equals("handleException")) {
                        try {
                            return method.invoke(grpc, args);
                        } catch (InvocationTargetException e) {
                            throw e.getCause();
                        }
                    }
                    throw new UnsupportedOperationException(method.getName());
                });
        // the asking node still sees n1 as its leader for its first send; the election then names n3
        AtomicReference<String> leader = new AtomicReference<>("n1");
        AtomicBoolean firstLook = new AtomicBoolean(true);
        LeaderAsks asker = new LeaderAsks("n2", group, rpc, () -> {
            String now = leader.get();
            if (firstLook.getAndSet(false)) {
                leader.set("n3");
            }
            return RaftPeerId.valueOf(now);
        }, () -> false, scheduler);

        ObjectNode answer = asker.ask("claim_forward", MeshJson.MAPPER.createObjectNode(), Duration.ofSeconds(5))
                .get(10, TimeUnit.SECONDS);

        assertThat(answer.path("forwarded_by").asText()).isEqualTo("n3#1");
        assertThat(sentTo).containsExactly("n1", "n3");
    }

    @Test
    void aRequestFailedByTheEndOfTheStreamItWasSentOnMayHaveArrived() {
        // the texts Ratis gives a request that was on a stream when it ended
        assertThat(SendFailures.neverLeft(new AlreadyClosedException(
                "client->n1: Stream onError: no reply for async request cid=7"))).isFalse();
        assertThat(SendFailures.neverLeft(new CompletionException(new AlreadyClosedException(
                "client->n1: Stream completed: no reply for async request cid=7")))).isFalse();
        assertThat(SendFailures.neverLeft(new java.io.IOException("UNAVAILABLE: io exception"))).isFalse();
        assertThat(SendFailures.neverLeft(new CompletionException(new AlreadyClosedException("client->n1 is closed."))))
                .isTrue();
        assertThat(SendFailures.neverLeft(new AlreadyClosedException("client->n1: the stream is closed."))).isTrue();
    }
}
