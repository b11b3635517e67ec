package dev.synapsehub.net.tls;

import java.nio.file.Path;

/**
 * Native TLS on the hub port (contract F4): the server certificate chain and its key (PEM), and
 * optionally a CA whose certificates clients may present. With a CA, the server requests a
 * client certificate without requiring one: an agent without one connects as usual, while a
 * presented certificate must chain to the CA or the handshake fails.
 *
 * @param certFile PEM certificate chain, leaf first
 * @param keyFile PEM unencrypted PKCS#8 private key of the leaf
 * @param clientCaFile PEM CA certificate(s) for client certificates, or null to request none
 */
public record TlsFiles(Path certFile, Path keyFile, Path clientCaFile) {
    public TlsFiles {
        if (certFile == null || keyFile == null) {
            throw new IllegalArgumentException("native WSS requires both --tls-certfile and --tls-keyfile");
        }
    }

    /** These files with client certificates verified against {@code caFile}. */
    public TlsFiles withClientCa(Path caFile) {
        return new TlsFiles(certFile, keyFile, caFile);
    }
}
