package dev.synapsehub.client.tls;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import java.net.InetAddress;
import java.security.KeyStore;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A one-shot loopback JDK TLS 1.2 server that enables exactly the suites it is given: a test
 * connects its client to it to show the client really offers a suite the hub refuses, so the
 * refusal is not only the client's own JDK policy.
 */
public final class PermissiveTlsServer {
    private PermissiveTlsServer() {
    }

    /** A client's handshake with the server's port, returning the suite agreed. */
    public interface Client {
        /** Connects to loopback {@code port} and completes a handshake. */
        String handshake(int port) throws Exception;
    }

    /** Serves one handshake presenting {@code id} with {@code suites} to {@code client}; the suite it agreed. */
    public static String agreedWith(TestCertificates.Identity id, List<String> suites, Client client) throws Exception {
        KeyStore keys = KeyStore.getInstance("PKCS12");
        keys.load(null, null);
        keys.setKeyEntry("server", id.key(), new char[0], new X509Certificate[] {id.certificate()});
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(keys, new char[0]);
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(kmf.getKeyManagers(), null, new SecureRandom());
        try (SSLServerSocket server = (SSLServerSocket) ctx.getServerSocketFactory()
                .createServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            server.setEnabledProtocols(new String[] {"TLSv1.2"});
            server.setEnabledCipherSuites(suites.toArray(new String[0]));
            server.setSoTimeout(5_000);
            CompletableFuture<Void> served = CompletableFuture.runAsync(() -> {
                try (SSLSocket s = (SSLSocket) server.accept()) {
                    s.setSoTimeout(5_000);
                    s.startHandshake();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            String agreed = client.handshake(server.getLocalPort());
            served.get(5, TimeUnit.SECONDS);
            return agreed;
        }
    }
}
