package dev.synapsehub.journal;

import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.journal.JournalException;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Optional;

/**
 * The running hub's local control socket for journal operations that need its writer: a Unix
 * domain socket beside the journal ({@code <db>.control}, mode 0600, so only the file's owner
 * can use it, as only they can read the journal). Serves one request per connection, one at a
 * time: {@code backup <absolute target path>} answers {@code ok <summary>} or
 * {@code error <message>}. It is not on the network and not part of the wire protocol.
 */
public final class JournalControl implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(JournalControl.class.getName());
    private static final int MAX_REQUEST = 8192;

    private final Path socket;
    private final ServerSocketChannel server;
    private final SqliteJournal journal;
    private final WriterAccess writer;
    private final Retention retention;
    private final Thread thread;
    private volatile boolean closed;

    private JournalControl(Path socket, ServerSocketChannel server, SqliteJournal journal, WriterAccess writer,
                           Retention retention) {
        this.socket = socket;
        this.server = server;
        this.journal = journal;
        this.writer = writer;
        this.retention = retention;
        this.thread = new Thread(this::serve, "synapse-control");
        this.thread.setDaemon(true);
    }

    /** The control socket of the journal at {@code db}. */
    public static Path socketPath(Path db) {
        Path abs = db.toAbsolutePath().normalize();
        return abs.resolveSibling(abs.getFileName() + ".control");
    }

    /**
     * Listens on the control socket of {@code journal}; a stale socket file left by a killed hub is
     * replaced. Returns empty, after a WARN, when the socket cannot be bound (a path too long for
     * a Unix socket, a file system without them): the hub runs, only online backup is off.
     */
    public static Optional<JournalControl> start(SqliteJournal journal, CoordinationActor actor, Retention retention) {
        Path socket = socketPath(journal.path());
        try {
            Files.deleteIfExists(socket); // we hold the journal's writer lock: no other hub owns it
            ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
            server.bind(UnixDomainSocketAddress.of(socket));
            if (socket.getFileSystem().supportedFileAttributeViews().contains("posix")) {
                Files.setPosixFilePermissions(socket, PosixFilePermissions.fromString("rw-------"));
            }
            JournalControl control = new JournalControl(socket, server, journal, WriterAccess.actor(actor, 120), retention);
            control.thread.start();
            return Optional.of(control);
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "online journal backup is unavailable: cannot listen on " + socket
                    + " (" + e.getMessage() + "); stop the hub to back up the file offline");
            return Optional.empty();
        }
    }

    private void serve() {
        while (!closed) {
            try (SocketChannel client = server.accept()) {
                String request = readLine(client);
                String reply = answer(request);
                client.write(ByteBuffer.wrap((reply + "\n").getBytes(StandardCharsets.UTF_8)));
            } catch (IOException e) {
                if (!closed) {
                    LOG.log(System.Logger.Level.WARNING, "control socket: " + e.getMessage());
                }
            }
        }
    }

    private String answer(String request) {
        if (request == null || !request.startsWith("backup ")) {
            return "error unknown request (expected: backup <absolute path>)";
        }
        Path target = Path.of(request.substring("backup ".length()));
        if (!target.isAbsolute()) {
            return "error the backup target must be an absolute path";
        }
        try {
            return "ok " + JournalBackup.copy(journal, writer, retention, target).summary();
        } catch (JournalException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "online backup to " + target + " failed: " + e.getMessage());
            return "error " + e.getMessage().replace('\n', ' ');
        }
    }

    /**
     * Sends one request to the hub running on {@code db}; empty when no hub listens there (no
     * socket, or a stale one).
     */
    public static Optional<String> request(Path db, String line) throws IOException {
        Path socket = socketPath(db);
        if (!Files.exists(socket)) {
            return Optional.empty();
        }
        try (SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            try {
                channel.connect(UnixDomainSocketAddress.of(socket));
            } catch (IOException refused) {
                return Optional.empty(); // left behind by a hub that was killed
            }
            channel.write(ByteBuffer.wrap((line + "\n").getBytes(StandardCharsets.UTF_8)));
            return Optional.ofNullable(readLine(channel));
        }
    }

    private static String readLine(SocketChannel channel) throws IOException {
        ByteBuffer buf = ByteBuffer.allocate(MAX_REQUEST);
        while (buf.hasRemaining()) {
            if (channel.read(buf) < 0) {
                break;
            }
            for (int i = 0; i < buf.position(); i++) {
                if (buf.get(i) == '\n') {
                    return new String(buf.array(), 0, i, StandardCharsets.UTF_8);
                }
            }
        }
        return buf.position() == 0 ? null : new String(buf.array(), 0, buf.position(), StandardCharsets.UTF_8);
    }

    /** Stops listening, lets a request in progress finish, removes the socket file. */
    @Override
    public void close() {
        closed = true;
        try {
            server.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        try {
            thread.join(600_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            Files.deleteIfExists(socket);
        } catch (IOException ignored) {
            // a stale socket file is replaced at the next start
        }
    }
}
