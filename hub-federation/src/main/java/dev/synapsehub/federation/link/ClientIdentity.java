package dev.synapsehub.federation.link;

import dev.synapsehub.federation.trust.SecureFile;
import dev.synapsehub.federation.trust.TrustFileException;
import dev.synapsehub.net.tls.FileStamp;
import io.netty.handler.ssl.SslContextBuilder;
import dev.synapsehub.client.tls.TlsEngine;

import javax.net.ssl.SSLException;
import dev.synapsehub.client.tls.ClientKeyMaterial;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The client certificate and key this hub presents to peers ({@code --multihub-client-certfile},
 * {@code --multihub-client-keyfile}), watched for edits. About once a second a daemon thread of its
 * own compares the files' stamps (size, modification time, file key, mode, owner, change time)
 * with the last check; a change is checked again as at start-up (owned by this hub's user and by
 * it only, no symlinks, size, a certificate and key that load). Peer operations (on connector
 * threads and event loops) never touch the disk: {@link #current()} answers what the last check
 * found, so an edit takes effect from the next check, not from the next operation.
 * While the files do not validate every peer operation is refused, warm connections included,
 * so an edit never leaves the old identity in use behind the operator's back; once they validate
 * again, links reconnect with the new identity ({@link #current()} returns a new stamp).
 */
public final class ClientIdentity implements AutoCloseable {
    /** No client certificate: nothing to watch, never refused. */
    public static final ClientIdentity NONE = new ClientIdentity(null, null, m -> { }, ClientIdentity::stampOf);
    /** How often the watcher checks the files. */
    public static final long CHECK_MILLIS = 1000;
    private static final long MAX_BYTES = 1024 * 1024;

    private final Path certFile;
    private final Path keyFile;
    private final Consumer<String> log;
    /** How a file is stat'ed (tests count the calls: no peer operation may make one). */
    private final Function<Path, List<Object>> stat;
    private final AtomicLong invalidEdits = new AtomicLong();
    private final AtomicLong loadedEdits = new AtomicLong();
    private volatile Checked checked;
    private ScheduledExecutorService watcher;

    /**
     * What the last check of {@code stamps} found: null {@code error} and the bytes that validated
     * in {@code material}, or the error (and null material).
     */
    private record Checked(List<Object> stamps, String error, InForce inForce) {
        Checked(List<Object> stamps, String error, ClientKeyMaterial material) {
            this(stamps, error, material == null ? null : new InForce(stamps, material));
        }
    }

    /**
     * The identity in force: {@code stamps} tell a connection made with it from one made before a
     * change; {@code material} is the certificate and key exactly as read and validated, which the
     * connection presents (the files are not read a second time).
     */
    public record InForce(List<Object> stamps, ClientKeyMaterial material) {
    }

    private ClientIdentity(Path certFile, Path keyFile, Consumer<String> log, Function<Path, List<Object>> stat) {
        this.certFile = certFile;
        this.keyFile = keyFile;
        this.log = log;
        this.stat = stat;
    }

    /**
     * The identity in {@code certFile} and {@code keyFile} ({@link #NONE} when both are null),
     * checked once now and then about once a second on a daemon thread of its own (stopped by
     * {@link #close()}); {@code log} receives one line per change of outcome.
     */
    public static ClientIdentity watching(Path certFile, Path keyFile, Consumer<String> log) {
        return watching(certFile, keyFile, log, CHECK_MILLIS, ClientIdentity::stampOf);
    }

    /**
     * Like the above, checking every {@code checkMillis} and stat'ing each file with {@code stat}
     * (tests: a long interval checks only on {@link #checkNow()}; a counting stat shows who stats).
     */
    static ClientIdentity watching(Path certFile, Path keyFile, Consumer<String> log, long checkMillis,
                                   Function<Path, List<Object>> stat) {
        if (certFile == null && keyFile == null) {
            return NONE;
        }
        ClientIdentity identity = new ClientIdentity(certFile, keyFile, log, stat);
        identity.checked = identity.check(identity.stamps());
        identity.watcher = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "synapse-federation-identity-watch");
            t.setDaemon(true);
            return t;
        });
        identity.watcher.scheduleWithFixedDelay(identity::checkQuietly, checkMillis, checkMillis,
                TimeUnit.MILLISECONDS);
        return identity;
    }

    /** Stops the watcher thread; {@link #current()} then keeps answering what the last check found. */
    @Override
    public void close() {
        if (watcher != null) {
            watcher.shutdownNow();
        }
    }

    /** True while the watcher thread runs (tests: closed with the hub). */
    public boolean isWatching() {
        return watcher != null && !watcher.isShutdown();
    }

    /** True while the files, as last checked, validate (always without a client certificate). */
    public boolean valid() {
        return certFile == null || checked.error() == null;
    }

    /** Changes of the files that did not validate (each logged once per distinct error). */
    public long invalidEdits() {
        return invalidEdits.get();
    }

    /** Changes of the files that validated and are in force (tests await an edit's check with it). */
    public long loadedEdits() {
        return loadedEdits.get();
    }

    /**
     * The identity in force as the last check found it, with the stamp that tells whether a
     * connection was made with it; never touches the disk (it is called before each peer
     * operation, on connector threads and event loops).
     *
     * @throws IOException while the files, as last checked, do not validate (the operation is refused)
     */
    public InForce current() throws IOException {
        if (certFile == null) {
            return new InForce(List.of(), null);
        }
        Checked c = checked;
        if (c.error() != null) {
            throw new IOException("the multi-hub client identity does not validate: " + c.error());
        }
        return c.inForce;
    }

    /**
     * Checks the files again if a stamp changed since the last check (the watcher calls this about
     * once a second; tests call it to skip the wait).
     */
    public synchronized void checkNow() {
        if (certFile == null) {
            return;
        }
        List<Object> now = stamps();
        Checked c = checked;
        if (c.stamps().equals(now)) {
            return;
        }
        Checked next = check(now);
        if (next.error() == null && c.error() != null) {
            log.accept("multi-hub client identity validates again: peers are reached with " + certFile);
        } else if (next.error() == null) {
            log.accept("multi-hub client identity changed: links to peers reconnect with " + certFile);
        } else if (!next.error().equals(c.error())) {
            log.accept("multi-hub client identity no longer validates; every peer operation is refused "
                    + "until it does: " + next.error());
        }
        checked = next;
        // counted only once in force: whoever sees the count finds it applied
        if (next.error() == null) {
            loadedEdits.incrementAndGet();
        } else {
            invalidEdits.incrementAndGet();
        }
    }

    private void checkQuietly() {
        try {
            checkNow();
        } catch (Throwable fault) { // a fault must not end the watcher, nor leave the last identity in force
            failClosed("the check itself failed (tried again in a second): " + fault);
        }
    }

    /**
     * A check that could not finish refuses every peer operation until one does: serving the last
     * identity on would be failing open. No stamps, so the next check reads the files again.
     */
    private synchronized void failClosed(String error) {
        Checked c = checked;
        checked = new Checked(List.of(), error, (ClientKeyMaterial) null);
        if (!error.equals(c.error())) { // counted and logged once per distinct failure, not every second
            invalidEdits.incrementAndGet();
            log.accept("multi-hub client identity: every peer operation is refused until a check succeeds: " + error);
        }
    }

    /** Both files' stamps (see {@link #stampOf(Path)}). */
    private List<Object> stamps() {
        List<Object> out = new java.util.ArrayList<>(stat.apply(certFile));
        out.addAll(stat.apply(keyFile));
        return List.copyOf(out);
    }

    /**
     * A file's stamp, mode, owner and inode change time: a chmod or chown changes neither size
     * nor modification time, yet decides validity (a key given to another owner may no longer be
     * ours to read); the change time also catches a rewrite whose modification time was set back.
     */
    static List<Object> stampOf(Path file) {
        return List.of(FileStamp.of(file), mode(file), owner(file), changed(file));
    }

    private static String owner(Path file) {
        try {
            return Files.getOwner(file, LinkOption.NOFOLLOW_LINKS).getName();
        } catch (IOException | UnsupportedOperationException e) {
            return "";
        }
    }

    /** {@code unix:ctime} where the file system has it, else "". */
    private static String changed(Path file) {
        try {
            return String.valueOf(Files.getAttribute(file, "unix:ctime", LinkOption.NOFOLLOW_LINKS));
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return "";
        }
    }

    private static String mode(Path file) {
        try {
            return PosixFilePermissions.toString(Files.getPosixFilePermissions(file, LinkOption.NOFOLLOW_LINKS));
        } catch (IOException | UnsupportedOperationException e) {
            return "";
        }
    }

    private Checked check(List<Object> stamps) {
        try {
            // read once; what loads here is what connections present (ClientKeyMaterial), never a second read
            ClientKeyMaterial material = new ClientKeyMaterial(
                    SecureFile.read(certFile, "--multihub-client-certfile:", MAX_BYTES),
                    SecureFile.read(keyFile, "--multihub-client-keyfile:", MAX_BYTES));
            TlsEngine.apply(SslContextBuilder.forClient()).keyManager(
                    new ByteArrayInputStream(material.certificatePem()), new ByteArrayInputStream(material.keyPem()))
                    .build();
            return new Checked(stamps, null, material);
        } catch (TrustFileException e) {
            return new Checked(stamps, e.getMessage(), (ClientKeyMaterial) null);
        } catch (SSLException | IllegalArgumentException e) {
            return new Checked(stamps, certFile + " and " + keyFile + " do not load as a certificate and its key: "
                    + e.getMessage(), (ClientKeyMaterial) null);
        }
    }
}
