package dev.synapsehub.federation.link;

import dev.synapsehub.federation.trust.SecureFile;
import dev.synapsehub.federation.trust.TrustFileException;
import dev.synapsehub.net.tls.FileStamp;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;

import javax.net.ssl.SSLException;
import dev.synapsehub.client.tls.ClientKeyMaterial;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.function.Consumer;

/**
 * The client certificate and key this hub presents to peers ({@code --multihub-client-certfile},
 * {@code --multihub-client-keyfile}), watched for edits. Before each peer operation the files'
 * stamps (size, modification time, file key, mode, owner, change time) are compared with what was
 * last checked; a change is checked again as at start-up (owned by this hub's user and by it
 * only, no symlinks, size, a certificate and key that load).
 * While the files do not validate every peer operation is refused, warm connections included,
 * so an edit never leaves the old identity in use behind the operator's back; once they validate
 * again, links reconnect with the new identity ({@link #current()} returns a new stamp).
 */
public final class ClientIdentity {
    /** No client certificate: nothing to watch, never refused. */
    public static final ClientIdentity NONE = new ClientIdentity(null, null, m -> { });
    private static final long MAX_BYTES = 1024 * 1024;

    private final Path certFile;
    private final Path keyFile;
    private final Consumer<String> log;
    private volatile Checked checked;

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

    private ClientIdentity(Path certFile, Path keyFile, Consumer<String> log) {
        this.certFile = certFile;
        this.keyFile = keyFile;
        this.log = log;
    }

    /**
     * The identity in {@code certFile} and {@code keyFile} ({@link #NONE} when both are null),
     * checked once now; {@code log} receives one line per change of outcome.
     */
    public static ClientIdentity of(Path certFile, Path keyFile, Consumer<String> log) {
        if (certFile == null && keyFile == null) {
            return NONE;
        }
        ClientIdentity identity = new ClientIdentity(certFile, keyFile, log);
        identity.checked = identity.check(identity.stamps());
        return identity;
    }

    /**
     * The stamp of the files in force, to tell whether a connection was made with the current
     * identity.
     *
     * @throws IOException while the files do not validate (the operation is refused)
     */
    public InForce current() throws IOException {
        if (certFile == null) {
            return new InForce(List.of(), null);
        }
        List<Object> now = stamps();
        Checked c = checked;
        if (!c.stamps().equals(now)) {
            synchronized (this) {
                c = checked;
                if (!c.stamps().equals(now)) {
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
                    c = next;
                }
            }
        }
        if (c.error() != null) {
            throw new IOException("the multi-hub client identity does not validate: " + c.error());
        }
        return c.inForce;
    }

    /**
     * The files' stamps, modes, owners and inode change times: a chmod or chown changes neither
     * size nor modification time, yet decides validity (a key given to another owner may no
     * longer be ours to read); the change time also catches a rewrite whose modification time was
     * set back.
     */
    private List<Object> stamps() {
        return List.of(FileStamp.of(certFile), FileStamp.of(keyFile), mode(certFile), mode(keyFile), owner(certFile),
                owner(keyFile), changed(certFile), changed(keyFile));
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
            SslContextBuilder.forClient().sslProvider(SslProvider.JDK).keyManager(
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
