package dev.synapsehub.mesh;

import dev.synapsehub.client.tls.PermissiveTlsServer;
import dev.synapsehub.client.tls.TestCertificates;
import dev.synapsehub.client.tls.TlsEngine;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.grpc.GrpcTlsConfig;
import org.apache.ratis.thirdparty.io.netty.buffer.ByteBufAllocator;
import org.apache.ratis.thirdparty.io.netty.handler.ssl.SslContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The mesh's Raft transport (Ratis gRPC) is given the hub's one TLS policy, TlsEngine's protocols
 * and suites, on its server and client contexts alike: a peer holding a certificate from the
 * cluster CA but offering only a refused suite (TLS 1.2 CBC with SHA-1) cannot join, while the
 * same peer offering a listed suite completes the handshake. The node's certificates are EC, so
 * the refused suites offered are the ECDSA ones a server with this key could otherwise pick.
 */
class MeshTransportTlsTest {
    private static final List<String> CBC = List.of("TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA",
            "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA");

    @TempDir
    Path dir;
    private TestCluster cluster;

    @AfterEach
    void stop() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void aPeerOfferingOnlyCbcSuitesCannotJoinTheSamePeerOnAListedSuiteCan() throws Exception {
        TestCertificates.Authority ca = TestCertificates.authority("mesh-ca");
        Path caFile = ca.writeCertificate(dir, "mesh-ca");
        MeshTls n1 = MeshTlsTest.issue(dir, ca, caFile, "n1");
        MeshTls n2 = MeshTlsTest.issue(dir, ca, caFile, "n2");
        MeshTls n3 = MeshTlsTest.issue(dir, ca, caFile, "n3");
        cluster = new TestCluster(dir, 3, id -> switch (id) {
            case "n1" -> n1;
            case "n2" -> n2;
            default -> n3;
        });
        cluster.awaitLeader();
        assertThat(org.apache.ratis.RaftConfigKeys.Rpc.type(MeshNode.properties(cluster.config("n1")), ignored -> { }))
                .as("a node's server and clients are built on the mesh transport").isInstanceOf(MeshTransport.class);
        MeshPeer target = cluster.peers().get(0);
        SSLContext peer = jdkContext(ca.issue("n4"), ca.identity().certificate()); // the cluster CA issued it

        // the control that the offer is real: a server allowing CBC negotiates it with this very client
        assertThat(PermissiveTlsServer.agreedWith(ca.issue("permissive"), CBC, port -> handshake(peer, port, CBC)))
                .isIn(CBC);
        assertThatThrownBy(() -> handshake(peer, target.port(), CBC))
                .as("a mesh node refuses a peer offering only TLS 1.2 CBC-SHA1").isInstanceOf(SSLException.class);
        assertThat(handshake(peer, target.port(), List.of("TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256")))
                .as("the same peer offering a listed suite completes the handshake")
                .isEqualTo("TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256");
    }

    @Test
    void theTransportsServerAndClientContextsEnableExactlyTheHubsPolicy() throws Exception {
        TestCertificates.Authority ca = TestCertificates.authority("mesh-ca");
        Path caFile = ca.writeCertificate(dir, "mesh-ca");
        GrpcTlsConfig tls = GrpcConfigKeys.TLS.conf(MeshTls.parameters(MeshTlsTest.issue(dir, ca, caFile, "n1")));
        for (SslContext context : List.of(MeshGrpcFactory.forServer(tls), MeshGrpcFactory.forClient(tls))) {
            SSLEngine engine = context.newEngine(ByteBufAllocator.DEFAULT);
            // SSLv2Hello is no protocol version, only the hello format BoringSSL reports itself accepting
            assertThat(engine.getEnabledProtocols()).as("protocols of %s", context)
                    .filteredOn(p -> !p.equals("SSLv2Hello"))
                    .containsExactlyInAnyOrderElementsOf(TlsEngine.PROTOCOLS);
            assertThat(engine.getEnabledCipherSuites()).as("suites of %s", context).isNotEmpty()
                    .isSubsetOf(TlsEngine.CIPHERS).doesNotContainAnyElementsOf(CBC);
        }
    }

    /** A JDK TLS context presenting {@code id} and trusting {@code ca}. */
    private static SSLContext jdkContext(TestCertificates.Identity id, X509Certificate ca) throws Exception {
        KeyStore keys = KeyStore.getInstance("PKCS12");
        keys.load(null, null);
        keys.setKeyEntry("me", id.key(), new char[0], new X509Certificate[] {id.certificate()});
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(keys, new char[0]);
        KeyStore trusted = KeyStore.getInstance("PKCS12");
        trusted.load(null, null);
        trusted.setCertificateEntry("ca", ca);
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trusted);
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(kmf.getKeyManagers(), tmf.getTrustManagers(), new SecureRandom());
        return ctx;
    }

    /** A TLS 1.2 handshake with loopback {@code port} offering only {@code suites}; the suite agreed. */
    private static String handshake(SSLContext ctx, int port, List<String> suites) throws Exception {
        try (SSLSocket s = (SSLSocket) ctx.getSocketFactory().createSocket("127.0.0.1", port)) {
            s.setSoTimeout(5_000);
            s.setEnabledProtocols(new String[] {"TLSv1.2"});
            s.setEnabledCipherSuites(suites.toArray(new String[0]));
            assertThat(s.getEnabledCipherSuites()).as("the client offers what it was given")
                    .containsExactlyElementsOf(suites);
            s.startHandshake();
            return s.getSession().getCipherSuite();
        }
    }
}
