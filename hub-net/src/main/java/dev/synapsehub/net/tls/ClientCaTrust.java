package dev.synapsehub.net.tls;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;
import javax.net.ssl.X509TrustManager;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;

/**
 * The client CA a TLS server verifies client certificates against, re-read when its file
 * changes (size, modification time or file key), so an operator can rotate it without a
 * restart. A file that no longer parses trusts nothing until it does: a certificate presented
 * then fails the handshake, it never passes on the CA that was replaced.
 */
public final class ClientCaTrust extends X509ExtendedTrustManager {
    private static final Logger LOG = LoggerFactory.getLogger(ClientCaTrust.class);
    /** Largest CA file read; a CA bundle is a few KiB. */
    static final long MAX_BYTES = 1 << 20;

    private final Path file;
    private volatile Loaded loaded;

    /** The trust in force (null while the file does not parse), why not, and what it was read from. */
    private record Loaded(FileStamp stamp, X509TrustManager delegate, X509Certificate[] issuers, String error) {
    }

    private ClientCaTrust(Path file) {
        this.file = file;
    }

    /**
     * Watches {@code file}; it must hold at least one PEM certificate now.
     *
     * @throws IllegalArgumentException naming the file when it cannot be used at start-up
     */
    public static ClientCaTrust watching(Path file) {
        ClientCaTrust trust = new ClientCaTrust(file.toAbsolutePath().normalize());
        Loaded first = trust.read(FileStamp.of(trust.file));
        if (first.delegate() == null) {
            throw new IllegalArgumentException(first.error());
        }
        trust.loaded = first;
        return trust;
    }

    /** The file watched. */
    public Path file() {
        return file;
    }

    /**
     * Checks that {@code chain} (leaf first) chains to the CA as the file is now.
     *
     * @throws CertificateException when it does not, or the file does not parse now
     */
    public void verify(List<X509Certificate> chain) throws CertificateException {
        if (chain.isEmpty()) {
            throw new CertificateException("no client certificate");
        }
        X509Certificate[] certs = chain.toArray(X509Certificate[]::new);
        current().checkClientTrusted(certs, certs[0].getPublicKey().getAlgorithm());
    }

    private X509TrustManager current() throws CertificateException {
        Loaded l = fresh();
        if (l.delegate() == null) {
            throw new CertificateException(l.error());
        }
        return l.delegate();
    }

    /** The trust as the file is now: re-read when its stamp moved since the last read. */
    private Loaded fresh() {
        Loaded l = loaded;
        FileStamp now = FileStamp.of(file);
        if (now.equals(l.stamp())) {
            return l;
        }
        synchronized (this) {
            l = loaded;
            if (!now.equals(l.stamp())) {
                l = read(now);
                if (l.delegate() != null) {
                    LOG.info("client CA {} reloaded: {} certificate(s)", file, l.issuers().length);
                } else {
                    LOG.warn("{}; client certificates are refused until it parses", l.error());
                }
                loaded = l;
            }
            return l;
        }
    }

    private Loaded read(FileStamp stamp) {
        try {
            if (stamp.size() < 0) {
                return refused(stamp, "client CA " + file + " is not a readable file");
            }
            if (stamp.size() > MAX_BYTES) {
                return refused(stamp, "client CA " + file + " is larger than " + MAX_BYTES + " bytes");
            }
            byte[] bytes = Files.readAllBytes(file);
            List<X509Certificate> cas = new ArrayList<>();
            for (Certificate c : CertificateFactory.getInstance("X.509")
                    .generateCertificates(new ByteArrayInputStream(bytes))) {
                cas.add((X509Certificate) c);
            }
            if (cas.isEmpty()) {
                return refused(stamp, "client CA " + file + " holds no PEM certificate");
            }
            KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
            store.load(null, null);
            for (int i = 0; i < cas.size(); i++) {
                store.setCertificateEntry("ca-" + i, cas.get(i));
            }
            TrustManagerFactory f = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            f.init(store);
            for (TrustManager tm : f.getTrustManagers()) {
                if (tm instanceof X509TrustManager x) {
                    return new Loaded(stamp, x, cas.toArray(X509Certificate[]::new), null);
                }
            }
            return refused(stamp, "client CA " + file + ": the JDK offers no X.509 trust manager");
        } catch (IOException | java.security.GeneralSecurityException | ClassCastException e) {
            return refused(stamp, "client CA " + file + " cannot be read as PEM certificates: " + e.getMessage());
        }
    }

    private static Loaded refused(FileStamp stamp, String why) {
        return new Loaded(stamp, null, new X509Certificate[0], why);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        current().checkClientTrusted(chain, authType);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
        current().checkClientTrusted(chain, authType);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException {
        current().checkClientTrusted(chain, authType);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        throw new CertificateException("a client CA verifies clients only");
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
        throw new CertificateException("a client CA verifies clients only");
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException {
        throw new CertificateException("a client CA verifies clients only");
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() {
        return fresh().issuers().clone(); // named in each handshake's certificate request: the CAs of now
    }
}
