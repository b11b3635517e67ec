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
 * time: {@code backup <absolute target path>} answers {@code ok <summary>},
 * {@code error target: <message>} for a target it refuses (one that exists, or not in an existing
 * directory: a matter of the command line) or {@code error <message>}, and while it works it
 * sends a {@code wait} line every {@link #HEARTBEAT_MILLIS} ms, so a client tells a hub busy with a long copy from a stopped one
 * by how long the hub stays silent. A request must arrive within {@link #REQUEST_TIMEOUT_MILLIS}
 * ms of the connection, so a client that never sends one cannot hold the socket. It is not on
 * the network and not part of the wire protocol.
 */
public final class JournalControl implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(JournalControl.class.getName());
    private static final int MAX_REQUEST = 8192;
    /** How often the hub says it is still working on a request. */
    static final long HEARTBEAT_MILLIS = 2_000;
    /** How long the hub waits for the request line after a client connected. */
    static final long REQUEST_TIMEOUT_MILLIS = 10_000;
    /** What the hub sends while it works on a request; never a reply. */
    static final String WAIT = "wait";
    /** How a reply refusing the backup target begins (the rest says why). */
    public static final String TARGET_REFUSED = "error target: ";

    private final Path socket;
    private final ServerSocketChannel server;
    private final SqliteJournal journal;
    private final WriterAccess writer;
    private final Retention retention;
    private final Thread thread;
    private final java.util.concurrent.ScheduledExecutorService heartbeats;
    private final long heartbeatMillis;
    private volatile boolean closed;

    private JournalControl(Path socket, ServerSocketChannel server, SqliteJournal journal, WriterAccess writer,
                           Retention retention, long heartbeatMillis) {
        this.heartbeatMillis = heartbeatMillis;
        this.socket = socket;
        this.server = server;
        this.journal = journal;
        this.writer = writer;
        this.retention = retention;
        this.thread = new Thread(this::serve, "synapse-control");
        this.thread.setDaemon(true);
        this.heartbeats = java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "synapse-control-heartbeat");
            t.setDaemon(true);
            return t;
        });
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
        return start(journal, actor, retention, HEARTBEAT_MILLIS);
    }

    /** As {@link #start(SqliteJournal, CoordinationActor, Retention)}, sending {@code wait} every {@code heartbeatMillis} (tests). */
    static Optional<JournalControl> start(SqliteJournal journal, CoordinationActor actor, Retention retention,
                                          long heartbeatMillis) {
        Path socket = socketPath(journal.path());
        try {
            Files.deleteIfExists(socket); // we hold the journal's writer lock: no other hub owns it
            ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
            server.bind(UnixDomainSocketAddress.of(socket));
            if (socket.getFileSystem().supportedFileAttributeViews().contains("posix")) {
                Files.setPosixFilePermissions(socket, PosixFilePermissions.fromString("rw-------"));
            }
            JournalControl control = new JournalControl(socket, server, journal, WriterAccess.actor(actor, 120), retention,
                    heartbeatMillis);
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
                String request;
                try (Lines lines = new Lines(client)) {
                    request = lines.next(REQUEST_TIMEOUT_MILLIS);
                } catch (NoAnswerException e) {
                    LOG.log(System.Logger.Level.WARNING, "control socket: no request within "
                            + REQUEST_TIMEOUT_MILLIS / 1000 + " s of a connection; closed it");
                    continue;
                }
                client.configureBlocking(true);
                Object writing = new Object();
                boolean[] answered = {false};
                java.util.concurrent.ScheduledFuture<?> beat = heartbeats.scheduleAtFixedRate(() -> {
                    synchronized (writing) {
                        if (!answered[0]) {
                            try {
                                send(client, WAIT);
                            } catch (IOException gone) {
                                answered[0] = true; // the client left; the request still completes
                            }
                        }
                    }
                }, heartbeatMillis, heartbeatMillis, java.util.concurrent.TimeUnit.MILLISECONDS);
                String reply;
                try {
                    reply = answer(request);
                } finally {
                    beat.cancel(false);
                }
                synchronized (writing) {
                    boolean gone = answered[0];
                    answered[0] = true;
                    if (!gone) {
                        send(client, reply);
                    }
                }
            } catch (IOException e) {
                if (!closed) {
                    LOG.log(System.Logger.Level.WARNING, "control socket: " + e.getMessage());
                }
            }
        }
    }

    private static void send(SocketChannel channel, String line) throws IOException {
        ByteBuffer buf = ByteBuffer.wrap((line + "\n").getBytes(StandardCharsets.UTF_8));
        while (buf.hasRemaining()) {
            channel.write(buf);
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
        } catch (BackupTargetRefusedException e) {
            LOG.log(System.Logger.Level.WARNING, "online backup to " + target + " refused: " + e.getMessage());
            return TARGET_REFUSED + e.getMessage().replace('\n', ' ');
        } catch (JournalException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "online backup to " + target + " failed: " + e.getMessage());
            return "error " + e.getMessage().replace('\n', ' ');
        }
    }

    /**
     * The control socket is there but this process may not use it: permission denied (it is its
     * owner's only, mode 0600) or another error than a stale socket's "connection refused".
     */
    public static final class UnusableSocketException extends IOException {
        UnusableSocketException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** Connects a channel (the real connect, or a test's). */
    interface Connector {
        boolean connect(SocketChannel channel, UnixDomainSocketAddress address) throws IOException;
    }

    /** The hub did not answer within the time allowed: stopped (SIGSTOP), hung, or busy with another client. */
    public static final class NoAnswerException extends IOException {
        NoAnswerException(String message) {
            super(message);
        }
    }

    /**
     * Sends one request to the hub running on {@code db}; empty when no hub listens there (no
     * socket, or a stale one). The hub may stay silent for at most {@code timeoutMillis} at a
     * time: to accept the connection, and between its {@code wait} lines, which a working hub
     * sends every {@link #HEARTBEAT_MILLIS} ms until it replies.
     *
     * @throws NoAnswerException when the hub stayed silent longer than that
     * @throws UnusableSocketException when the socket is there but cannot be connected to for
     *     another reason than a stale socket's (permission denied, above all)
     */
    public static Optional<String> request(Path db, String line, long timeoutMillis) throws IOException {
        return request(db, line, timeoutMillis, SocketChannel::connect);
    }

    /** As {@link #request(Path, String, long)}, connecting through {@code connector}. */
    static Optional<String> request(Path db, String line, long timeoutMillis, Connector connector) throws IOException {
        Path socket = socketPath(db);
        if (!Files.exists(socket)) {
            return Optional.empty();
        }
        try (SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX); Lines lines = new Lines(channel)) {
            try {
                if (!connector.connect(channel, UnixDomainSocketAddress.of(socket))) {
                    lines.awaitConnect(timeoutMillis);
                }
            } catch (NoAnswerException e) {
                throw e;
            } catch (java.net.ConnectException refused) {
                return Optional.empty(); // left behind by a hub that was killed: nobody listens
            } catch (IOException e) {
                if (!Files.exists(socket, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                    return Optional.empty(); // removed meanwhile: the hub stopped
                }
                // not a stale socket: permission denied, above all, which an offline refusal would hide
                throw new UnusableSocketException(unusable(db, socket, e), e);
            }
            lines.send(line, timeoutMillis);
            while (true) { // bounded by the hub: it stops sending wait lines once it replied or stopped
                String reply = lines.next(timeoutMillis);
                if (!WAIT.equals(reply)) {
                    return Optional.ofNullable(reply);
                }
            }
        } catch (NoAnswerException e) {
            throw new NoAnswerException("the hub on " + db + " stayed silent for more than " + timeoutMillis / 1000.0
                    + " s on its control socket " + socket + " (" + e.getMessage() + "): it is stopped (SIGSTOP),"
                    + " hung, or busy with another client's request");
        }
    }

    private static String unusable(Path db, Path socket, IOException e) {
        String message = "cannot use the control socket " + socket + " of the hub running on " + db + ": "
                + e.getMessage();
        if (e instanceof java.nio.file.AccessDeniedException
                || String.valueOf(e.getMessage()).toLowerCase(java.util.Locale.ROOT).contains("permission denied")) {
            String owner;
            try {
                owner = " (" + Files.getOwner(socket, java.nio.file.LinkOption.NOFOLLOW_LINKS).getName() + ")";
            } catch (IOException | UnsupportedOperationException unknown) {
                owner = "";
            }
            message += "; the socket is its owner's only (mode 0600): run this as the user the hub runs as" + owner;
        }
        return message;
    }

    /** Lines over a non-blocking channel, each read or write waiting at most a given time. */
    private static final class Lines implements AutoCloseable {
        private final SocketChannel channel;
        private final java.nio.channels.Selector selector;
        private final ByteBuffer buf = ByteBuffer.allocate(MAX_REQUEST);

        Lines(SocketChannel channel) throws IOException {
            this.channel = channel;
            channel.configureBlocking(false);
            this.selector = java.nio.channels.Selector.open();
        }

        void awaitConnect(long timeoutMillis) throws IOException {
            await(java.nio.channels.SelectionKey.OP_CONNECT, timeoutMillis, "accept the connection");
            channel.finishConnect();
        }

        void send(String line, long timeoutMillis) throws IOException {
            ByteBuffer out = ByteBuffer.wrap((line + "\n").getBytes(StandardCharsets.UTF_8));
            long deadline = System.nanoTime() + timeoutMillis * 1_000_000;
            while (out.hasRemaining()) {
                if (channel.write(out) == 0) {
                    await(java.nio.channels.SelectionKey.OP_WRITE, remaining(deadline), "take the request");
                }
            }
        }

        /** The next line, or null when the other side closed without one. */
        String next(long timeoutMillis) throws IOException {
            long deadline = System.nanoTime() + timeoutMillis * 1_000_000;
            while (true) {
                for (int i = 0; i < buf.position(); i++) {
                    if (buf.get(i) == '\n') {
                        String line = new String(buf.array(), 0, i, StandardCharsets.UTF_8);
                        buf.flip().position(i + 1);
                        buf.compact();
                        return line;
                    }
                }
                if (!buf.hasRemaining()) {
                    throw new IOException("a control line longer than " + MAX_REQUEST + " bytes");
                }
                int read = channel.read(buf);
                if (read < 0) {
                    return buf.position() == 0 ? null
                            : new String(buf.array(), 0, buf.position(), StandardCharsets.UTF_8);
                }
                if (read == 0) {
                    await(java.nio.channels.SelectionKey.OP_READ, remaining(deadline), "answer");
                }
            }
        }

        private static long remaining(long deadline) {
            return Math.max(0, (deadline - System.nanoTime()) / 1_000_000);
        }

        private void await(int op, long timeoutMillis, String what) throws IOException {
            java.nio.channels.SelectionKey key = channel.register(selector, op);
            try {
                if (timeoutMillis <= 0 || selector.select(timeoutMillis) == 0) {
                    throw new NoAnswerException("did not " + what + " in time");
                }
            } finally {
                key.interestOps(0);
                selector.selectedKeys().clear();
            }
        }

        @Override
        public void close() throws IOException {
            selector.close(); // deregisters the channel, so it may be put back in blocking mode
        }
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
        heartbeats.shutdownNow();
        try {
            Files.deleteIfExists(socket);
        } catch (IOException ignored) {
            // a stale socket file is replaced at the next start
        }
    }
}
