package dev.synapsehub.mesh;

import dev.synapsehub.client.tls.TlsEngine;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.grpc.GrpcFactory;
import org.apache.ratis.grpc.GrpcTlsConfig;
import org.apache.ratis.grpc.GrpcUtil;
import org.apache.ratis.grpc.client.GrpcClientRpc;
import org.apache.ratis.grpc.server.GrpcServices;
import org.apache.ratis.grpc.server.GrpcServicesImpl;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.thirdparty.io.grpc.netty.GrpcSslContexts;
import org.apache.ratis.thirdparty.io.netty.handler.ssl.ClientAuth;
import org.apache.ratis.thirdparty.io.netty.handler.ssl.SslContext;
import org.apache.ratis.thirdparty.io.netty.handler.ssl.SslContextBuilder;
import org.apache.ratis.thirdparty.io.netty.handler.ssl.SupportedCipherSuiteFilter;

import javax.net.ssl.SSLException;

/**
 * Ratis' gRPC transport with TLS contexts given {@link TlsEngine#PROTOCOLS} and
 * {@link TlsEngine#CIPHERS} explicitly, as every other TLS context of the hub is: Ratis builds its
 * own from a {@link GrpcTlsConfig} with gRPC's defaults, which would leave the mesh's suites to
 * whatever the shaded gRPC and Netty of the day enable. Without TLS it is Ratis' gRPC unchanged.
 */
final class MeshGrpcFactory extends GrpcFactory {
    private final GrpcServices.Customizer customizer;
    /** The TLS settings; null without TLS. */
    private final GrpcTlsConfig tls;
    /** Contexts a node or client connects to a peer with (both sides use it); null without TLS. */
    private final SslContext clientSide;

    MeshGrpcFactory(Parameters parameters) {
        super(parameters);
        this.customizer = GrpcConfigKeys.Server.servicesCustomizer(parameters);
        this.tls = GrpcConfigKeys.TLS.conf(parameters);
        // the server side is built in newRaftServerRpc: a factory of a client (admin, probe) never needs it
        this.clientSide = tls == null ? null : forClient(tls);
    }

    /** The server-side context of {@code tls} under the policy (package-private: tests read its engines). */
    static SslContext forServer(GrpcTlsConfig tls) {
        SslContextBuilder b = GrpcUtil.initSslContextBuilderForServer(tls.getKeyManager());
        if (tls.getMtlsEnabled()) {
            b.clientAuth(ClientAuth.REQUIRE);
            GrpcUtil.setTrustManager(b, tls.getTrustManager());
        }
        return build(GrpcSslContexts.configure(b), "server", tls);
    }

    /** The client-side context of {@code tls} under the policy (package-private: tests read its engines). */
    static SslContext forClient(GrpcTlsConfig tls) {
        SslContextBuilder b = GrpcSslContexts.forClient();
        GrpcUtil.setTrustManager(b, tls.getTrustManager());
        if (tls.getMtlsEnabled()) {
            GrpcUtil.setKeyManager(b, tls.getKeyManager());
        }
        return build(b, "client", tls);
    }

    private static SslContext build(SslContextBuilder configured, String side, GrpcTlsConfig tls) {
        // after gRPC's configure (HTTP/2 ALPN, its own suites): the hub's list replaces its suites;
        // the filter drops a listed suite the engine lacks, never adds one
        configured.protocols(TlsEngine.PROTOCOLS).ciphers(TlsEngine.CIPHERS, SupportedCipherSuiteFilter.INSTANCE);
        try {
            return configured.build();
        } catch (SSLException e) {
            throw new IllegalArgumentException("cannot build the mesh's " + side + " TLS context from " + tls
                    + ": " + e.getMessage(), e);
        }
    }

    @Override
    public GrpcServices newRaftServerRpc(RaftServer server) {
        if (tls == null) {
            return super.newRaftServerRpc(server);
        }
        // contexts a node's servers present (Raft, admin and client ports)
        SslContext serverSide = forServer(tls);
        // the same wiring as GrpcFactory's, with one TLS setting for every port (MeshTls.parameters)
        return GrpcServicesImpl.newBuilder().setServer(server).setCustomizer(customizer)
                .setAdminSslContext(serverSide).setServerSslContextForServer(serverSide)
                .setServerSslContextForClient(clientSide).setClientSslContext(serverSide).build();
    }

    @Override
    public GrpcClientRpc newRaftClientRpc(ClientId clientId, RaftProperties properties) {
        if (clientSide == null) {
            return super.newRaftClientRpc(clientId, properties);
        }
        return new GrpcClientRpc(clientId, properties, clientSide, clientSide);
    }
}
