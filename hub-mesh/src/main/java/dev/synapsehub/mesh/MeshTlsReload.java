package dev.synapsehub.mesh;

import org.apache.ratis.conf.Parameters;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.grpc.GrpcTlsConfig;

import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.X509ExtendedTrustManager;
import java.io.IOException;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A node's mesh TLS files picked up again when they change, without a restart: the Raft
 * transport is given a key manager and a trust manager that delegate to the current ones, and
 * every new TLS handshake (a new peer connection, a forwarded write's reconnect, an admin client)
 * uses whatever {@link #check()} last loaded. Connections already open keep the session they
 * negotiated. A changed set of files must pass every check {@link MeshTls#load} makes at start
 * (key matching the certificate, owner-only key, valid now, issued by the CA); one that does not
 * is refused, logged once and counted, and the previous files stay in force.
 */
final class MeshTlsReload {
    private static final System.Logger LOG = System.getLogger(MeshTlsReload.class.getName());
    /** How often a running node looks at its files' modification time, size and identity. */
    static final Duration CHECK_EVERY = Duration.ofSeconds(5);

    private final String nodeId;
    private final Path certFile;
    private final Path keyFile;
    private final Path caFile;
    private volatile Loaded current;
    /** The files' stamp last refused: logged once, until they change again. */
    private List<Object> refusedStamp;
    private final AtomicLong reloads = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();

    /** What one load of the files gave: the managers, the subject, and the files' stamp then. */
    private record Loaded(X509ExtendedKeyManager keys, X509ExtendedTrustManager trust, String subject,
                          List<Object> stamp) {
    }

    MeshTlsReload(String nodeId, MeshTls initial) {
        this.nodeId = nodeId;
        this.certFile = initial.certFile();
        this.keyFile = initial.keyFile();
        this.caFile = initial.caFile();
        this.current = loaded(initial, stamp());
    }

    private static Loaded loaded(MeshTls tls, List<Object> stamp) {
        MeshTls.Managers m = tls.managers();
        if (!(m.keyManager() instanceof X509ExtendedKeyManager keys)
                || !(m.trustManager() instanceof X509ExtendedTrustManager trust)) {
            throw new IllegalStateException("this JDK's default key or trust manager is not an X509Extended one");
        }
        return new Loaded(keys, trust, tls.subject(), stamp);
    }

    /** Ratis parameters whose TLS managers follow the files (the server, its peer clients and the node's client). */
    Parameters parameters() {
        Parameters p = new Parameters();
        GrpcConfigKeys.TLS.setConf(p, new GrpcTlsConfig(new PresentedKey(() -> current.keys()), new Trust(), true));
        return p;
    }

    /**
     * Loads the files again when their modification time, size or identity changed since the
     * last load; a set that fails a check is refused and the previous one kept.
     *
     * @return true when a new set was loaded now
     */
    synchronized boolean check() {
        List<Object> stamp = stamp();
        if (stamp.equals(current.stamp()) || stamp.equals(refusedStamp)) {
            return false;
        }
        Loaded next;
        try {
            next = loaded(MeshTls.load(certFile, keyFile, caFile), stamp);
        } catch (RuntimeException e) {
            refusedStamp = stamp;
            failures.incrementAndGet();
            LOG.log(System.Logger.Level.ERROR, "mesh node " + nodeId + ": the changed TLS files are refused, the"
                    + " previous certificate, key and CA stay in force: " + e.getMessage());
            return false;
        }
        current = next;
        refusedStamp = null;
        reloads.incrementAndGet();
        LOG.log(System.Logger.Level.WARNING, "mesh node " + nodeId + ": TLS files reloaded, new connections present "
                + next.subject() + " and trust " + caFile);
        return true;
    }

    /** Sets of files loaded since start (not counting the first). */
    long reloads() {
        return reloads.get();
    }

    /** Changed sets of files refused since start. */
    long failures() {
        return failures.get();
    }

    /** The subject of the certificate new connections present. */
    String subject() {
        return current.subject();
    }

    /** Modification time, size and file identity of the three files (a rename over one changes its identity). */
    private List<Object> stamp() {
        List<Object> stamp = new ArrayList<>();
        for (Path f : List.of(certFile, keyFile, caFile)) {
            try {
                BasicFileAttributes a = Files.readAttributes(f, BasicFileAttributes.class);
                stamp.add(a.lastModifiedTime().toMillis());
                stamp.add(a.size());
                stamp.add(Objects.toString(a.fileKey()));
            } catch (IOException e) {
                stamp.add("unreadable: " + e.getMessage()); // load then says what is wrong
            }
        }
        return stamp;
    }

    /** The cluster CA, as last loaded. */
    private final class Trust extends X509ExtendedTrustManager {
        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
                throws CertificateException {
            current.trust().checkClientTrusted(chain, authType, socket);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
                throws CertificateException {
            current.trust().checkServerTrusted(chain, authType, socket);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
                throws CertificateException {
            current.trust().checkClientTrusted(chain, authType, engine);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
                throws CertificateException {
            current.trust().checkServerTrusted(chain, authType, engine);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            current.trust().checkClientTrusted(chain, authType);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            current.trust().checkServerTrusted(chain, authType);
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return current.trust().getAcceptedIssuers();
        }
    }
}
