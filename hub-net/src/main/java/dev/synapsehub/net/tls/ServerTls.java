package dev.synapsehub.net.tls;

import dev.synapsehub.client.tls.PemFiles;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import dev.synapsehub.client.tls.TlsEngine;
import io.netty.channel.Channel;

import javax.net.ssl.SSLPeerUnverifiedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;

/** Builds the server's TLS context from {@link TlsFiles}, and reads a connection's client certificate. */
public final class ServerTls {
    private ServerTls() {
    }

    /**
     * The server context: TLS 1.2 or 1.3 with {@link TlsEngine#CIPHERS} only; client certificates requested (not required) only
     * when a client CA is configured, and verified against that file as it is at each
     * handshake ({@link ClientCaTrust}).
     *
     * @throws IllegalArgumentException naming the file and the fix when one cannot be used, or the
     *                                  key is not the certificate's
     */
    public static SslContext context(TlsFiles files) {
        readable(files.certFile(), "--tls-certfile");
        readable(files.keyFile(), "--tls-keyfile");
        SslContext built;
        try {
            SslContextBuilder b = TlsEngine.apply(SslContextBuilder.forServer(files.certFile().toFile(),
                            files.keyFile().toFile()),
                    // with a client CA, the JDK's engine: BoringSSL's takes the CA list it sends
                    // clients (getAcceptedIssuers) once, when the context is built, so after the CA
                    // file is rotated clients holding only a new-CA certificate present none and are
                    // refused until a restart (LogServingTest.aRotatedClientCa...); the JDK's asks
                    // ClientCaTrust at each handshake
                    files.clientCaFile() != null ? io.netty.handler.ssl.SslProvider.JDK : TlsEngine.provider());
            if (files.clientCaFile() != null) {
                readable(files.clientCaFile(), "client CA");
                b.trustManager(ClientCaTrust.watching(files.clientCaFile())).clientAuth(ClientAuth.OPTIONAL);
            }
            built = b.build();
        } catch (Exception e) {
            throw new IllegalArgumentException("cannot serve native WSS: "
                    + PemFiles.explainFailure(e, files.certFile(), files.keyFile()), e);
        }
        // the TLS library loads a key that is not the certificate's, and every handshake then fails
        KeyPairMatch.check(files.certFile(), files.keyFile());
        return built;
    }

    /**
     * Checks the files without building a context (cheap, before a start opens its journal):
     * both readable, the certificate parses, the key is the certificate's.
     *
     * @throws IllegalArgumentException naming the file and the fix
     */
    public static void checkFiles(TlsFiles files) {
        readable(files.certFile(), "--tls-certfile");
        readable(files.keyFile(), "--tls-keyfile");
        KeyPairMatch.check(files.certFile(), files.keyFile());
    }

    private static void readable(Path p, String what) {
        if (!Files.isRegularFile(p) || !Files.isReadable(p)) {
            throw new IllegalArgumentException(what + " " + p + " is not a readable file");
        }
    }

    /**
     * The client certificate presented on {@code channel}'s completed TLS handshake, or null
     * when the connection is not TLS or the client presented none.
     */
    public static X509Certificate peerCertificate(Channel channel) {
        List<X509Certificate> chain = peerCertificateChain(channel);
        return chain.isEmpty() ? null : chain.get(0);
    }

    /**
     * The certificate chain (leaf first) presented in {@code channel}'s completed TLS handshake,
     * empty when the connection is not TLS or the client presented none.
     */
    public static List<X509Certificate> peerCertificateChain(Channel channel) {
        SslHandler ssl = channel.pipeline().get(SslHandler.class);
        if (ssl == null) {
            return List.of();
        }
        try {
            List<X509Certificate> out = new ArrayList<>();
            for (Certificate c : ssl.engine().getSession().getPeerCertificates()) {
                if (!(c instanceof X509Certificate x)) {
                    return List.of();
                }
                out.add(x);
            }
            return List.copyOf(out);
        } catch (SSLPeerUnverifiedException none) {
            return List.of();
        }
    }
}
