package dev.synapsehub.mesh;

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
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.net.ServerSocket;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A linearizable read on a follower during an election waits for the next leader, up to the
 * commit timeout, instead of being refused at once: the follower keeps the dead leader's id until
 * its own election timer fires, and every read in that window failed on the dead leader's port.
 * The dead leader is a loopback port nobody listens on, reached through Ratis' real gRPC client;
 * the next leader answers the read index in this JVM.
 */
class LinearizableReadsElectionTest {
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    private final GrpcClientRpc grpc = new GrpcClientRpc(ClientId.randomId(), new RaftProperties(), null, null);

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

    @Test
    void aReadOnAFollowerWhoseLeaderDiedWaitsForTheNextLeaderWithinTheCommitTimeout() throws Exception {
        grpc.addRaftPeers(List.of(RaftPeer.newBuilder().setId("n1").setAddress("127.0.0.1:" + deadPort()).build()));
        List<String> sentTo = new CopyOnWriteArrayList<>();
        RaftClientRpc rpc = (RaftClientRpc) Proxy.newProxyInstance(RaftClientRpc.class.getClassLoader(),
                new Class<?>[]{RaftClientRpc.class}, (proxy, method, args) -> {
                    if (method.getName().equals("sendRequestAsyncUnordered")) {
                        RaftClientRequest r = (RaftClientRequest) args[0];
                        sentTo.add(r.getServerId().toString());
                        if (r.getServerId().toString().equals("n1")) {
                            return grpc.sendRequestAsyncUnordered(r); // the dead leader, through the real client
                        }
                        Message index = Message.valueOf(ByteString.copyFrom(MeshJson.bytes(
                                LinearizableReads.answer(7L, null))));
                        return CompletableFuture.completedFuture(
                                RaftClientReply.newBuilder().setRequest(r).setSuccess().setMessage(index).build());
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
        // the follower names the dead n1 until ~300 ms after the read came, then the elected n3
        AtomicLong firstLook = new AtomicLong();
        LinearizableReads reads = new LinearizableReads(rpc, new AtomicLong(), new ChannelResets(),
                RaftGroupId.randomId(), new LinearizableReads.Node() {
                    @Override
                    public CompletableFuture<Void> afterAppliedSoFar() {
                        return CompletableFuture.completedFuture(null);
                    }

                    @Override
                    public RaftPeerId leader() {
                        long now = System.nanoTime();
                        firstLook.compareAndSet(0, now);
                        return RaftPeerId.valueOf(now - firstLook.get() < TimeUnit.MILLISECONDS.toNanos(300)
                                ? "n1" : "n3");
                    }

                    @Override
                    public long appliedIndex() {
                        return 7;
                    }
                }, null, scheduler, 5_000);

        reads.barrier().get(10, TimeUnit.SECONDS);

        assertThat(sentTo).as("asked the dead leader first").startsWith("n1").endsWith("n3");
        assertThat(reads.served()).isEqualTo(1);
        assertThat(reads.refused()).isZero();
    }
}
