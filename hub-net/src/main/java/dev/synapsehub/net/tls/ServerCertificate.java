package dev.synapsehub.net.tls;

import io.netty.handler.ssl.SslContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * This hub's server certificate and key ({@code --tls-certfile}, {@code --tls-keyfile}), re-read
 * when either file changes (real path, and the followed target's size, modification time, file
 * key and change time, so a swapped symlink counts; checked once a second on a thread of its own,
 * never on an event loop), so new handshakes present the new pair
 * without a restart; connections already open keep theirs.
 *
 * <p>A changed pair that does not load keeps the last pair that did, with a WARN once per change
 * and a count: the server certificate is this hub's identity, not a trust input (it admits no
 * one), so keeping it is not a cached allow; refusing every TLS connection instead would turn a
 * half-written rotation into an outage for every agent. The operator sees the refusal on
 * {@code /metrics} and in the log, and clients pinned to the new certificate fail closed until
 * the new pair loads.
 */
public final class ServerCertificate implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ServerCertificate.class);

    private final TlsFiles files;
    private final AtomicLong reloads;
    private final AtomicLong failures;
    private volatile SslContext context;
    /** The stamps of the files as last checked (loaded or not), so one bad edit is logged and counted once. */
    private List<Object> checked;
    private ScheduledExecutorService watcher;

    private ServerCertificate(TlsFiles files, AtomicLong reloads, AtomicLong failures) {
        this.files = files;
        this.reloads = reloads;
        this.failures = failures;
    }

    /**
     * Loads {@code files} now and watches them; {@code reloads} counts pairs loaded after a change,
     * {@code failures} changed pairs that did not load.
     *
     * @throws IllegalArgumentException naming the file and the fix when the pair cannot be used at start-up
     */
    public static ServerCertificate watching(TlsFiles files, AtomicLong reloads, AtomicLong failures) {
        ServerCertificate c = new ServerCertificate(files, reloads, failures);
        c.checked = c.stamps();
        c.context = ServerTls.context(files);
        c.watcher = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "synapse-tls-certificate-watch");
            t.setDaemon(true);
            return t;
        });
        c.watcher.scheduleWithFixedDelay(c::checkNow, 1, 1, TimeUnit.SECONDS);
        return c;
    }

    /** The context new connections are served with. */
    public SslContext context() {
        return context;
    }

    /** Re-reads the pair if a file changed since the last check (the watcher calls this once a second). */
    public synchronized void checkNow() {
        List<Object> now = stamps();
        if (now.equals(checked)) {
            return;
        }
        checked = now;
        try {
            context = ServerTls.context(files);
            reloads.incrementAndGet();
            LOG.info("this hub's server certificate changed: new TLS connections are served with {} and {}",
                    files.certFile(), files.keyFile());
        } catch (RuntimeException e) {
            failures.incrementAndGet();
            LOG.warn("this hub's server certificate and key changed but do not load; new TLS connections keep the "
                    + "previous pair until they do: {}", e.getMessage());
        }
    }

    /**
     * Per file: the path as named (not followed), the real path it resolves to and the followed
     * target's size, modification time, file key and change time. A rewrite with its modification
     * time set back still changes the change time; a swapped link anywhere on the path (a
     * Kubernetes secret mount's {@code ..data}) changes the real path or the target's stamp. The
     * server certificate is this hub's identity, not a secret the hub trusts, so links are followed
     * here (a client identity, {@code SecureFile}, still refuses them).
     */
    private List<Object> stamps() {
        return List.of(stamp(files.certFile()), stamp(files.keyFile()));
    }

    private static List<Object> stamp(Path file) {
        return List.of(FileStamp.of(file), realPath(file), FileStamp.followed(file), changed(file));
    }

    private static String realPath(Path file) {
        try {
            return file.toRealPath().toString();
        } catch (IOException e) {
            return "";
        }
    }

    private static String changed(Path file) {
        try {
            return String.valueOf(Files.getAttribute(file, "unix:ctime"));
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return "";
        }
    }

    @Override
    public void close() {
        watcher.shutdownNow();
    }
}
