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
import org.apache.ratis.thirdparty.io.grpc.Status;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.List;
import java.util.Map;
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
        try (DeadNodeRpc dead = new DeadNodeRpc("n1")) {
            // the stream to n1 ends (its node died): every request on it since is refused unsent
            failureOf(dead.real().sendRequestAsyncUnordered(read("n1", 1)));
            Throwable refused = failureOf(dead.real().sendRequestAsyncUnordered(read("n1", 2)));
            assertThat(refused).as("Ratis' refusal on an ended stream, as this test needs it")
                    .isInstanceOf(AlreadyClosedException.class).hasMessageEndingWith(" is closed.");

            LeaderAsks n3 = new LeaderAsks("n3", group, null, () -> RaftPeerId.valueOf("n3"), () -> true, scheduler);
            AtomicInteger ran = new AtomicInteger();
            n3.serve("claim_forward", body -> CompletableFuture.completedFuture(
                    MeshJson.MAPPER.createObjectNode().put("forwarded_by", "n3#" + ran.incrementAndGet())));
            RaftClientRpc rpc = dead.rpc(r -> n3.forwarded(MeshJson.tree(r.getMessage().getContent().toByteArray()))
                    .thenApply(m -> RaftClientReply.newBuilder().setRequest(r).setSuccess().setMessage(m).build()));
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
            assertThat(dead.sentTo).containsExactly("n1", "n3");
        }
    }

    /** A node's Raft client service on a loopback port that takes each request and never answers it. */
    private static org.apache.ratis.thirdparty.io.grpc.Server silentServer(java.util.concurrent.CountDownLatch took)
            throws Exception {
        return org.apache.ratis.thirdparty.io.grpc.netty.NettyServerBuilder
                .forAddress(new java.net.InetSocketAddress("127.0.0.1", 0))
                .addService(new org.apache.ratis.proto.grpc.RaftClientProtocolServiceGrpc
                        .RaftClientProtocolServiceImplBase() {
                    @Override
                    public org.apache.ratis.thirdparty.io.grpc.stub.StreamObserver<
                            org.apache.ratis.proto.RaftProtos.RaftClientRequestProto> unordered(
                            org.apache.ratis.thirdparty.io.grpc.stub.StreamObserver<
                                    org.apache.ratis.proto.RaftProtos.RaftClientReplyProto> out) {
                        return new org.apache.ratis.thirdparty.io.grpc.stub.StreamObserver<>() {
                            @Override
                            public void onNext(org.apache.ratis.proto.RaftProtos.RaftClientRequestProto p) {
                                took.countDown();
                            }

                            @Override
                            public void onError(Throwable t) {
                            }

                            @Override
                            public void onCompleted() {
                                out.onCompleted();
                            }
                        };
                    }
                }).build().start();
    }

    @Test
    void aRequestOnTheStreamWhenItsNodeShutDownFailsWithTheStreamsGrpcStatusAndMayHaveArrived() throws Exception {
        java.util.concurrent.CountDownLatch took = new java.util.concurrent.CountDownLatch(1);
        org.apache.ratis.thirdparty.io.grpc.Server n1 = silentServer(took);
        try {
            grpc.addRaftPeers(List.of(RaftPeer.newBuilder().setId("n1").setAddress("127.0.0.1:" + n1.getPort()).build()));
            CompletableFuture<RaftClientReply> inFlight = grpc.sendRequestAsyncUnordered(read("n1", 1));
            assertThat(took.await(10, TimeUnit.SECONDS)).as("the node took the request").isTrue();
            n1.shutdownNow();
            Throwable failure = failureOf(inFlight);
            assertThat(failure).as("Ratis' failure of a request the node took, as this test needs it")
                    .isInstanceOf(java.io.IOException.class)
                    .hasRootCauseInstanceOf(org.apache.ratis.thirdparty.io.grpc.StatusRuntimeException.class);
            assertThat(SendFailures.neverLeft(failure)).isFalse();
            assertThat(SendFailures.streamBroke(failure)).as(String.valueOf(failure)).isTrue();
        } finally {
            n1.shutdownNow();
        }
    }

    @Test
    void anAskInFlightWhenItsStreamBrokeIsResentOnlyToThatNodeWhichAnswersItFromItsKeptAnswer() throws Exception {
        LeaderAsks n1 = new LeaderAsks("n1", group, null, () -> RaftPeerId.valueOf("n1"), () -> true, scheduler);
        LeaderAsks n3 = new LeaderAsks("n3", group, null, () -> RaftPeerId.valueOf("n3"), () -> true, scheduler);
        AtomicInteger ran = new AtomicInteger();
        for (var n : List.of(Map.entry("n1", n1), Map.entry("n3", n3))) {
            n.getValue().serve("claim_forward", body -> CompletableFuture.completedFuture(
                    MeshJson.MAPPER.createObjectNode().put("forwarded_by", n.getKey() + "#" + ran.incrementAndGet())));
        }
        List<JsonNode> asks = new CopyOnWriteArrayList<>();
        AtomicBoolean breakStream = new AtomicBoolean(true);
        RaftClientRpc rpc = (RaftClientRpc) Proxy.newProxyInstance(RaftClientRpc.class.getClassLoader(),
                new Class<?>[]{RaftClientRpc.class}, (proxy, method, args) -> {
                    if (method.getName().equals("sendRequestAsyncUnordered")) {
                        RaftClientRequest r = (RaftClientRequest) args[0];
                        String to = r.getServerId().toString();
                        sentTo.add(to);
                        JsonNode ask = MeshJson.tree(r.getMessage().getContent().toByteArray());
                        asks.add(ask);
                        return (to.equals("n1") ? n1 : n3).forwarded(ask).thenApply(m -> {
                            if (breakStream.getAndSet(false)) {
                                // n1 ran it; its stream was cancelled before the answer came back
                                throw new CompletionException(new java.io.IOException(Status.CANCELLED
                                        .withDescription("RST_STREAM closed stream").asRuntimeException()));
                            }
                            return RaftClientReply.newBuilder().setRequest(r).setSuccess().setMessage(m).build();
                        });
                    }
                    if (method.getName().equals("handleException")) {
                        return false;
                    }
                    throw new UnsupportedOperationException(method.getName());
                });
        // the election names n3 after the first send: only n1 can tell whether it ran the ask
        AtomicBoolean firstLook = new AtomicBoolean(true);
        LeaderAsks asker = new LeaderAsks("n2", group, rpc,
                () -> RaftPeerId.valueOf(firstLook.getAndSet(false) ? "n1" : "n3"), () -> false, scheduler);

        ObjectNode answer = asker.ask("claim_forward", MeshJson.MAPPER.createObjectNode(), Duration.ofSeconds(5))
                .get(10, TimeUnit.SECONDS);

        assertThat(answer.path("forwarded_by").asText()).as("n1's first answer").isEqualTo("n1#1");
        assertThat(ran.get()).as("run once").isEqualTo(1);
        assertThat(sentTo).containsExactly("n1", "n1");
        assertThat(asks.get(1).path(LeaderAsks.RESENT).asBoolean(false)).isTrue();
    }

    @Test
    void aRequestFailedByTheEndOfTheStreamItWasSentOnMayHaveArrived() {
        // the texts Ratis gives a request that was on a stream when it ended
        // (the stream's own error, an IOException around the gRPC status, or "Stream <event>: no reply" when it
        // completed or was closed by a reset; Ratis 3.2.2 gives no "Stream onError" text)
        assertThat(SendFailures.neverLeft(new CompletionException(new AlreadyClosedException(
                "client->n1: Stream completed: no reply for async request cid=7")))).isFalse();
        assertThat(SendFailures.neverLeft(new AlreadyClosedException(
                "client->n1: Stream close: no reply for async request cid=7"))).isFalse();
        for (Status status : List.of(Status.CANCELLED, Status.UNAVAILABLE)) {
            java.io.IOException broke = new java.io.IOException(status.asRuntimeException());
            assertThat(SendFailures.neverLeft(broke)).as(status.getCode().name()).isFalse();
            assertThat(SendFailures.streamBroke(new CompletionException(broke))).as(status.getCode().name()).isTrue();
        }
        // a channel that never connected fails UNAVAILABLE around the refused connection: it never left
        java.io.IOException refused = new java.io.IOException(Status.UNAVAILABLE
                .withCause(new java.net.ConnectException("Connection refused")).asRuntimeException());
        assertThat(SendFailures.neverLeft(refused)).isTrue();
        assertThat(SendFailures.streamBroke(refused)).isFalse();
        assertThat(SendFailures.streamBroke(new org.apache.ratis.protocol.exceptions.TimeoutIOException("deadline",
                Status.DEADLINE_EXCEEDED.asRuntimeException()))).as("a slow node stays a timeout").isFalse();
        assertThat(SendFailures.streamBroke(new java.io.IOException(Status.UNAUTHENTICATED.asRuntimeException())))
                .as("a refused handshake fails the same way every time: not a stream that broke").isFalse();
        assertThat(SendFailures.streamBroke(new java.io.IOException(Status.RESOURCE_EXHAUSTED.asRuntimeException())))
                .as("a message over the limit neither").isFalse();
        assertThat(SendFailures.neverLeft(new CompletionException(new AlreadyClosedException("client->n1 is closed."))))
                .isTrue();
        assertThat(SendFailures.neverLeft(new AlreadyClosedException("client->n1: the stream is closed."))).isTrue();
    }
}
