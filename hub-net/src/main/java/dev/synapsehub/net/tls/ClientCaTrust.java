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
 *
 * <p>{@link #verify} (a peer's every forwarded claim or log pull, on its open connection) remembers
 * the chains that passed under the CA file as it is now, so a peer's next request is not a full
 * path validation again (its signatures were most of a forwarded claim's time on the owner). A
 * remembered chain counts only inside every one of its certificates' validity periods, and only
 * until the file changes: the trust re-read from a changed file starts with none remembered.
 */
public final class ClientCaTrust extends X509ExtendedTrustManager {
    private static final Logger LOG = LoggerFactory.getLogger(ClientCaTrust.class);
    /** Largest CA file read; a CA bundle is a few KiB. */
    static final long MAX_BYTES = 1 << 20;

    /** Chains remembered per CA file version; past this many, they are forgotten and checked afresh. */
    static final int MAX_REMEMBERED = 1024;

    private final Path file;
    private volatile Loaded loaded;
    /** Full path validations {@link #verify} ran (tests: a remembered chain runs none). */
    private final java.util.concurrent.atomic.AtomicLong fullChecks = new java.util.concurrent.atomic.AtomicLong();

    /**
     * The trust in force (null while the file does not parse), why not, and what it was read
     * from, with the chains {@link #verify} found trusted under it.
     */
    private record Loaded(FileStamp stamp, X509TrustManager delegate, X509Certificate[] issuers, String error,
                          java.util.Map<List<X509Certificate>, Validity> verified) {
        Loaded(FileStamp stamp, X509TrustManager delegate, X509Certificate[] issuers, String error) {
            this(stamp, delegate, issuers, error, new java.util.concurrent.ConcurrentHashMap<>());
        }
    }

    /** When every certificate of a chain is valid: from the latest start to the earliest end, in epoch ms. */
    private record Validity(long from, long to) {
        static Validity of(List<X509Certificate> chain) {
            long from = Long.MIN_VALUE;
            long to = Long.MAX_VALUE;
            for (X509Certificate c : chain) {
                from = Math.max(from, c.getNotBefore().getTime());
                to = Math.min(to, c.getNotAfter().getTime());
            }
            return new Validity(from, to);
        }

        boolean covers(long now) {
            return from <= now && now <= to;
        }
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
        Loaded l = trusted();
        Validity remembered = l.verified().get(chain);
        if (remembered != null && remembered.covers(System.currentTimeMillis())) {
            return;
        }
        X509Certificate[] certs = chain.toArray(X509Certificate[]::new);
        fullChecks.incrementAndGet();
        l.delegate().checkClientTrusted(certs, certs[0].getPublicKey().getAlgorithm());
        if (l.verified().size() >= MAX_REMEMBERED) {
            l.verified().clear(); // bounded: many peers' chains at once are checked in full again
        }
        l.verified().put(List.copyOf(chain), Validity.of(chain));
    }

    /** Full path validations {@link #verify} has run (tests). */
    long fullChecks() {
        return fullChecks.get();
    }

    private X509TrustManager current() throws CertificateException {
        return trusted().delegate();
    }

    /** The trust as the file is now; a file that does not parse now refuses. */
    private Loaded trusted() throws CertificateException {
        Loaded l = fresh();
        if (l.delegate() == null) {
            throw new CertificateException(l.error());
        }
        return l;
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
