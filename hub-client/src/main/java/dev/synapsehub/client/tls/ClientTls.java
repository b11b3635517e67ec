package dev.synapsehub.client.tls;

import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;

import javax.net.ssl.SSLException;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.util.Locale;

/**
 * How a client secures a {@code wss://} connection: an optional server pin (then CA and host
 * name are not checked, contract F4), else the JDK's CA verification with host-name checking;
 * optionally a client certificate to present (mutual TLS between hubs).
 *
 * @param pin the expected server pin, or null for CA verification
 * @param clientCertFile PEM certificate (chain) to present, or null; set with {@code clientKeyFile}
 * @param clientKeyFile PEM PKCS#8 private key of {@code clientCertFile}, or null
 */
public record ClientTls(CertificatePin pin, Path clientCertFile, Path clientKeyFile) {
    /** No pin, no client certificate: CA verification for {@code wss://}, nothing for {@code ws://}. */
    public static final ClientTls NONE = new ClientTls(null, null, null);

    public ClientTls {
        if ((clientCertFile == null) != (clientKeyFile == null)) {
            throw new IllegalArgumentException("a client certificate needs both its certificate and its key file");
        }
    }

    /** Pinned to {@code pin}, without a client certificate. */
    public static ClientTls pinned(CertificatePin pin) {
        return new ClientTls(pin, null, null);
    }

    /** This setting presenting the given client certificate. */
    public ClientTls withClientCertificate(Path certFile, Path keyFile) {
        return new ClientTls(pin, certFile, keyFile);
    }

    /** True for a {@code wss://} URI. */
    public static boolean secure(URI uri) {
        return "wss".equals(uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT));
    }

    /**
     * The client SSL context for {@code uri}.
     *
     * @throws IOException when a pin is set for a non-{@code wss://} URI, or a file cannot be loaded
     */
    public SslContext context(URI uri) throws IOException {
        return context(uri, null);
    }

    /**
     * The client SSL context for {@code uri}, presenting {@code material} (bytes read and checked
     * once by the caller) instead of reading {@link #clientCertFile} and {@link #clientKeyFile}
     * again; null {@code material} reads the files. {@code material} is presented only when this
     * setting has a client certificate and a pin: a setting without them presents nothing.
     *
     * @throws IOException when a pin is set for a non-{@code wss://} URI, or the pair cannot be loaded
     */
    public SslContext context(URI uri, ClientKeyMaterial material) throws IOException {
        if (!secure(uri)) {
            throw new IOException("not a wss:// URI: " + uri);
        }
        SslContextBuilder b = TlsEngine.apply(SslContextBuilder.forClient());
        if (pin != null) {
            b.trustManager(new PinnedTrustManager(pin));
        } else {
            b.endpointIdentificationAlgorithm("HTTPS");
        }
        if (material != null) {
            // the identity goes only where this setting presents one, and only to a pinned peer
            if (clientCertFile != null && pin != null) {
                b.keyManager(new java.io.ByteArrayInputStream(material.certificatePem()),
                        new java.io.ByteArrayInputStream(material.keyPem()));
            }
        } else if (clientCertFile != null) {
            b.keyManager(clientCertFile.toFile(), clientKeyFile.toFile());
        }
        try {
            return b.build();
        } catch (SSLException | IllegalArgumentException e) {
            throw new IOException("cannot set up TLS for " + uri + ": " + PemFiles.explainFailure(e, clientCertFile,
                    clientKeyFile), e);
        }
    }

    /** Refuses a pin on a URI that is not {@code wss://} (contract F4's connect-time check). */
    public void checkScheme(URI uri) throws IOException {
        if (pin != null && !secure(uri)) {
            throw new IOException("--pin requires a wss:// peer URI (got " + uri + ")");
        }
    }
}
