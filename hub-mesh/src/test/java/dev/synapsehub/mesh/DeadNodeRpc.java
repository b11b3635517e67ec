package dev.synapsehub.mesh;

import org.apache.ratis.client.RaftClientRpc;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.client.GrpcClientRpc;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftPeer;

import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

/**
 * A Raft client for tests: requests to one node go through Ratis' real gRPC client to a loopback
 * port nobody listens on (a node that died), so they fail as Ratis fails them; requests to any
 * other node are answered in this JVM. Records whom each request went to.
 */
final class DeadNodeRpc implements AutoCloseable {
    private final String dead;
    private final GrpcClientRpc grpc = new GrpcClientRpc(ClientId.randomId(), new RaftProperties(), null, null);
    /** The node each request was addressed to, in order. */
    final List<String> sentTo = new CopyOnWriteArrayList<>();

    DeadNodeRpc(String dead) throws IOException {
        this.dead = dead;
        grpc.addRaftPeers(List.of(RaftPeer.newBuilder().setId(dead).setAddress("127.0.0.1:" + deadPort()).build()));
    }

    /** Ratis' real client to the dead node alone (to bring its stream into a state first). */
    GrpcClientRpc real() {
        return grpc;
    }

    /** The client: the dead node through Ratis, every other node answered by {@code live}. */
    RaftClientRpc rpc(Function<RaftClientRequest, CompletableFuture<RaftClientReply>> live) {
        return (RaftClientRpc) Proxy.newProxyInstance(RaftClientRpc.class.getClassLoader(),
                new Class<?>[]{RaftClientRpc.class}, (proxy, method, args) -> {
                    if (method.getName().equals("sendRequestAsyncUnordered")) {
                        RaftClientRequest r = (RaftClientRequest) args[0];
                        String to = r.getServerId().toString();
                        sentTo.add(to);
                        return to.equals(dead) ? grpc.sendRequestAsyncUnordered(r) : live.apply(r);
                    }
                    if (method.getName().equals("handleException")) {
                        try {
                            return method.invoke(grpc, args); // the real channel reset
                        } catch (InvocationTargetException e) {
                            throw e.getCause();
                        }
                    }
                    throw new UnsupportedOperationException(method.getName());
                });
    }

    private static int deadPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    @Override
    public void close() {
        grpc.close();
    }
}
