package dev.synapsehub.journal;

import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.event.Durability;
import dev.synapsehub.core.journal.Journal;
import dev.synapsehub.core.journal.JournalException;
import dev.synapsehub.core.journal.JournaledEvent;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.function.Consumer;

/**
 * The durable journal: an SQLite database in WAL mode (schema and migrations in
 * {@link JournalSchema}, payloads in {@link EventCodec}).
 *
 * <p>Each {@link #append} is one transaction over prepared statements, committed with
 * {@code PRAGMA synchronous=FULL} when the batch holds any {@link Durability#FULL} event and
 * {@code NORMAL} otherwise (INV-JA-4). The level is set only when it changes and read back
 * from SQLite, see {@link #synchronousOfLastCommit()}.
 *
 * <p>{@link #open} refuses, without writing to it, a file that is not SQLite, a SQLite file
 * of another application, a damaged one, or one written by a newer schema. The database is
 * held with {@code locking_mode=EXCLUSIVE}, so a second hub cannot write to the same file.
 *
 * <p>Appends and replay come from one thread (the actor, and start-up before it); only
 * {@link #lastSeq()} is safe from any thread.
 */
public final class SqliteJournal implements Journal {
    private static final System.Logger LOG = System.getLogger(SqliteJournal.class.getName());
    private static final byte[] SQLITE_HEADER = "SQLite format 3\0".getBytes(StandardCharsets.US_ASCII);

    private final Path path;
    private final Connection connection;
    /** Rows per multi-row INSERT; a batch is written in chunks of this many, then row by row. */
    static final int CHUNK = 16;

    private final PreparedStatement insert;
    private final PreparedStatement insertChunk;
    private final PreparedStatement begin;
    private final PreparedStatement commit;
    private final PreparedStatement rollback;
    private final PreparedStatement lastRowId;
    private final EventCodec codec = new EventCodec();
    private final Map<String, PreparedStatement> readAfterStatements = new HashMap<>();
    private PreparedStatement readStored;
    private final long progressIntervalMillis;
    private volatile long lastSeq;
    private Durability synchronousLevel;
    private volatile Durability lastCommitSynchronous;
    private volatile ReplayStats lastReplay = ReplayStats.NONE;
    private boolean closed;

    private SqliteJournal(Path path, Connection connection, long progressIntervalMillis) throws SQLException {
        this.path = path;
        this.connection = connection;
        this.progressIntervalMillis = progressIntervalMillis;
        this.insert = connection.prepareStatement(insertSql(1));
        this.insertChunk = connection.prepareStatement(insertSql(CHUNK));
        this.begin = connection.prepareStatement("BEGIN IMMEDIATE");
        this.commit = connection.prepareStatement("COMMIT");
        this.rollback = connection.prepareStatement("ROLLBACK");
        this.lastRowId = connection.prepareStatement("SELECT last_insert_rowid()");
        try (Statement s = connection.createStatement();
             ResultSet rs = s.executeQuery("SELECT COALESCE(MAX(seq), 0) FROM events")) {
            rs.next();
            this.lastSeq = rs.getLong(1);
        }
    }

    private static String insertSql(int rows) {
        StringBuilder sql = new StringBuilder("INSERT INTO events(ts, kind, durability, payload) VALUES (?, ?, ?, ?)");
        for (int i = 1; i < rows; i++) {
            sql.append(", (?, ?, ?, ?)");
        }
        return sql.toString();
    }

    /** Opens (or creates) the journal at {@code path}; progress lines at most every 2 s. */
    public static SqliteJournal open(Path path) throws JournalException {
        return open(path, 2_000);
    }

    /**
     * Opens (or creates) the journal at {@code path}.
     *
     * @throws JournalRefusedException when the file is not a journal this hub may open; the
     *     file was not modified
     */
    public static SqliteJournal open(Path path, long progressIntervalMillis) throws JournalException {
        Path file = path.toAbsolutePath();
        checkHeader(file);
        createPrivately(file);
        Connection c;
        try {
            Properties props = new Properties();
            // sqlite-jdbc otherwise runs a regex and prepares, steps and finalizes a
            // "SELECT last_insert_rowid()" after every INSERT; appendRows reads it once per batch
            props.setProperty("jdbc.get_generated_keys", "false");
            c = DriverManager.getConnection("jdbc:sqlite:" + file, props);
        } catch (SQLException e) {
            throw new JournalException(file + ": cannot open the journal: " + e.getMessage(), e);
        }
        try {
            JournalSchema.Inspection found;
            try {
                found = JournalSchema.inspect(c, file.toString());
            } catch (SQLException e) {
                throw new JournalRefusedException(file + ": not a readable SQLite database (" + e.getMessage()
                        + "); refusing to open it. The file was not modified.", e);
            }
            String mode = pragma(c, "PRAGMA journal_mode=WAL");
            if (!"wal".equalsIgnoreCase(mode)) {
                throw new JournalException(file + ": cannot switch the journal to WAL mode (got " + mode + ")");
            }
            if (found.kind() == JournalSchema.Kind.EMPTY) {
                JournalSchema.create(c);
                LOG.log(System.Logger.Level.INFO, "created journal " + file + " (schema version "
                        + JournalSchema.CURRENT_VERSION + ")");
            } else {
                JournalSchema.migrate(c, found.version(), LOG);
            }
            pragma(c, "PRAGMA locking_mode=EXCLUSIVE");
            SqliteJournal journal = new SqliteJournal(file, c, progressIntervalMillis);
            journal.setSynchronous(Durability.FULL);
            return journal;
        } catch (JournalException e) {
            closeQuietly(c);
            throw e;
        } catch (SQLException e) {
            closeQuietly(c);
            throw new JournalException(file + ": cannot open the journal: " + e.getMessage(), e);
        }
    }

    /** Refuses a non-empty file that does not start with the SQLite header, before SQLite sees it. */
    private static void checkHeader(Path file) throws JournalException {
        if (!Files.exists(file)) {
            return;
        }
        try {
            if (Files.isDirectory(file)) {
                throw new JournalRefusedException(file + " is a directory, not a journal file");
            }
            long size = Files.size(file);
            if (size == 0) {
                return; // an empty file is an empty database
            }
            byte[] head = new byte[SQLITE_HEADER.length];
            int read;
            try (InputStream in = Files.newInputStream(file)) {
                read = in.readNBytes(head, 0, head.length);
            }
            if (read < head.length || !Arrays.equals(head, SQLITE_HEADER)) {
                throw new JournalRefusedException(file + ": not an SQLite database (bad header);"
                        + " refusing to open it. The file was not modified; pass another --db path.");
            }
        } catch (IOException e) {
            throw new JournalException(file + ": cannot read the journal file: " + e.getMessage(), e);
        }
    }

    /** Creates a missing journal file readable by its owner only (mode 0600 where supported). */
    private static void createPrivately(Path file) throws JournalException {
        if (Files.exists(file)) {
            return;
        }
        try {
            if (file.getFileSystem().supportedFileAttributeViews().contains("posix")) {
                Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            } else {
                Files.createFile(file);
            }
        } catch (FileAlreadyExistsException raced) {
            // someone created it meanwhile: it is checked like any existing file by SQLite
        } catch (IOException e) {
            throw new JournalException(file + ": cannot create the journal file: " + e.getMessage(), e);
        }
    }

    private static String pragma(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            return rs.next() ? rs.getString(1) : null;
        }
    }

    private void setSynchronous(Durability level) throws SQLException {
        if (level == synchronousLevel) {
            return;
        }
        try (Statement s = connection.createStatement()) {
            s.execute("PRAGMA synchronous=" + (level == Durability.FULL ? "FULL" : "NORMAL"));
        }
        String readBack = pragma(connection, "PRAGMA synchronous");
        int value = readBack == null ? -1 : Integer.parseInt(readBack);
        Durability actual = value == 2 ? Durability.FULL : value == 1 ? Durability.NORMAL : null;
        if (actual != level) {
            synchronousLevel = null;
            throw new SQLException("PRAGMA synchronous reads back " + readBack + " after setting " + level);
        }
        synchronousLevel = actual;
    }

    /** One row to write: what {@link #append} turns each event into. */
    record Row(double ts, String kind, Durability durability, String payload) {
    }

    @Override
    public List<JournaledEvent> append(List<CoordinationEvent> batch) throws JournalException {
        ensureOpen();
        if (batch.isEmpty()) {
            return List.of();
        }
        List<Row> rows = new ArrayList<>(batch.size());
        try {
            for (CoordinationEvent event : batch) {
                rows.add(new Row(event.ts(), event.kind(), event.durability(), codec.encode(event)));
            }
        } catch (RuntimeException e) {
            throw new JournalException("cannot encode the batch; nothing was committed", e);
        }
        long first = appendRows(rows);
        List<JournaledEvent> committed = new ArrayList<>(batch.size());
        for (int i = 0; i < batch.size(); i++) {
            committed.add(new JournaledEvent(first + i, batch.get(i)));
        }
        return committed;
    }

    /** The commit level of a batch: FULL when any row asks for it, NORMAL otherwise (INV-JA-4). */
    static Durability levelOf(List<Row> rows) {
        for (Row row : rows) {
            if (row.durability() == Durability.FULL) {
                return Durability.FULL;
            }
        }
        return Durability.NORMAL;
    }

    /**
     * Writes {@code rows} in one transaction at {@link #levelOf} their durability.
     *
     * @return the seq of the first row; the others follow contiguously
     */
    long appendRows(List<Row> rows) throws JournalException {
        ensureOpen();
        boolean inTransaction = false;
        try {
            Durability level = levelOf(rows);
            setSynchronous(level);
            begin.executeUpdate();
            inTransaction = true;
            // multi-row INSERTs number their rows in VALUES order, like single ones
            int i = 0;
            for (; i + CHUNK <= rows.size(); i += CHUNK) {
                for (int k = 0; k < CHUNK; k++) {
                    bind(insertChunk, 4 * k, rows.get(i + k));
                }
                insertChunk.executeUpdate();
            }
            for (; i < rows.size(); i++) {
                bind(insert, 0, rows.get(i));
                insert.executeUpdate();
            }
            long last;
            try (ResultSet rs = lastRowId.executeQuery()) {
                rs.next();
                last = rs.getLong(1);
            }
            long first = last - rows.size() + 1;
            if (first <= lastSeq) {
                throw new SQLException("sequence went backwards: first " + first + " after " + lastSeq);
            }
            commit.executeUpdate();
            inTransaction = false;
            lastSeq = last;
            lastCommitSynchronous = level;
            return first;
        } catch (SQLException e) {
            if (inTransaction) {
                try {
                    rollback.executeUpdate();
                } catch (SQLException rollbackFailure) {
                    e.addSuppressed(rollbackFailure);
                }
            }
            throw new JournalException(path + ": append of " + rows.size()
                    + " events failed; nothing was committed: " + e.getMessage(), e);
        }
    }

    private static void bind(PreparedStatement statement, int offset, Row row) throws SQLException {
        statement.setDouble(offset + 1, row.ts());
        statement.setString(offset + 2, row.kind());
        statement.setString(offset + 3, row.durability().name());
        statement.setString(offset + 4, row.payload());
    }

    @Override
    public void replay(Consumer<JournaledEvent> sink) throws JournalException {
        ensureOpen();
        ReplayProgress progress = new ReplayProgress(LOG, lastSeq, progressIntervalMillis);
        long rows = 0;
        long replayed = 0;
        long unknown = 0;
        long corrupt = 0;
        long firstCorrupt = 0;
        try (PreparedStatement q = connection.prepareStatement("SELECT seq, ts, kind, payload FROM events ORDER BY seq");
             ResultSet rs = q.executeQuery()) {
            while (rs.next()) {
                rows++;
                long seq = rs.getLong(1);
                double ts = rs.getDouble(2);
                String kind = rs.getString(3);
                byte[] payload = rs.getBytes(4); // the stored UTF-8, decoded without a String copy
                Optional<CoordinationEvent> event;
                try {
                    event = payload != null ? codec.decode(kind, ts, payload) : codec.decode(kind, ts, rs.getString(4));
                } catch (EventCodec.CorruptPayloadException e) {
                    corrupt++;
                    if (firstCorrupt == 0) {
                        firstCorrupt = seq;
                    }
                    LOG.log(System.Logger.Level.ERROR, "journal row seq=" + seq + " kind=" + kind
                            + " is corrupt and was not replayed: " + e.getMessage());
                    continue;
                }
                if (event.isEmpty()) {
                    unknown++;
                } else {
                    sink.accept(new JournaledEvent(seq, event.get()));
                    replayed++;
                }
                if ((rows & 4095) == 0) {
                    progress.update(rows);
                }
            }
        } catch (SQLException e) {
            throw new JournalException(path + ": replay failed after " + rows + " rows: " + e.getMessage(), e);
        }
        lastReplay = new ReplayStats(rows, replayed, unknown, corrupt, firstCorrupt, progress.elapsedSeconds());
        LOG.log(corrupt == 0 ? System.Logger.Level.INFO : System.Logger.Level.WARNING,
                "journal replay done: " + lastReplay);
    }

    /**
     * {@inheritDoc}
     *
     * <p>Runs on the appending thread (the actor, via {@code CoordinationActor.read}) rather than
     * on a second read-only connection: the journal holds {@code locking_mode=EXCLUSIVE}, which
     * keeps the WAL index in this connection's private memory, so no other connection could read
     * it, and the single-writer connection is not thread-safe. The read is bounded by
     * {@code limit} (the contract's 1000-chat replay scan) and walks the primary-key range
     * {@code seq > afterSeq} with a prepared statement, so the actor pauses for at most one
     * bounded range scan. Undecodable rows are skipped (they are reported by replay).
     */
    @Override
    public List<JournaledEvent> readAfter(long afterSeq, int limit, Set<String> kinds) throws JournalException {
        ensureOpen();
        if (limit <= 0 || kinds.isEmpty()) {
            return List.of();
        }
        List<String> sorted = new ArrayList<>(new java.util.TreeSet<>(kinds));
        String key = String.join(",", sorted);
        List<JournaledEvent> out = new ArrayList<>();
        try {
            PreparedStatement q = readAfterStatements.get(key);
            if (q == null) {
                if (readAfterStatements.size() >= 16) {
                    for (PreparedStatement old : readAfterStatements.values()) {
                        old.close();
                    }
                    readAfterStatements.clear();
                }
                String marks = String.join(",", java.util.Collections.nCopies(sorted.size(), "?"));
                q = connection.prepareStatement("SELECT seq, ts, kind, payload FROM events WHERE seq > ? AND kind IN ("
                        + marks + ") ORDER BY seq LIMIT ?");
                readAfterStatements.put(key, q);
            }
            q.setLong(1, afterSeq);
            for (int i = 0; i < sorted.size(); i++) {
                q.setString(2 + i, sorted.get(i));
            }
            q.setInt(2 + sorted.size(), limit);
            try (ResultSet rs = q.executeQuery()) {
                while (rs.next()) {
                    long seq = rs.getLong(1);
                    try {
                        codec.decode(rs.getString(3), rs.getDouble(2), rs.getString(4))
                                .ifPresent(e -> out.add(new JournaledEvent(seq, e)));
                    } catch (EventCodec.CorruptPayloadException e) {
                        LOG.log(System.Logger.Level.WARNING, "journal row seq=" + seq + " skipped in a read: "
                                + e.getMessage());
                    }
                }
            }
        } catch (SQLException e) {
            throw new JournalException(path + ": read after seq " + afterSeq + " failed: " + e.getMessage(), e);
        }
        return out;
    }

    /**
     * The stored rows with {@code seq > afterSeq}, every kind, undecoded, in seq order: at most
     * {@code maxEvents}, and no more rows once their payloads reach {@code maxBytes} (the first
     * row always comes). Serving a peer's log pull (contract §11.1). Same threading rule as
     * {@link #readAfter}: on the appending thread, through {@code CoordinationActor.read}.
     */
    public List<StoredEvent> readStored(long afterSeq, int maxEvents, long maxBytes) throws JournalException {
        ensureOpen();
        List<StoredEvent> out = new ArrayList<>();
        if (maxEvents <= 0) {
            return out;
        }
        try {
            if (readStored == null) {
                readStored = connection.prepareStatement(
                        "SELECT seq, ts, kind, payload FROM events WHERE seq > ? ORDER BY seq LIMIT ?");
            }
            readStored.setLong(1, afterSeq);
            readStored.setInt(2, maxEvents);
            long bytes = 0;
            try (ResultSet rs = readStored.executeQuery()) {
                while (rs.next()) {
                    String payload = rs.getString(4);
                    bytes += payload == null ? 0 : payload.length();
                    if (!out.isEmpty() && bytes > maxBytes) {
                        break;
                    }
                    out.add(new StoredEvent(rs.getLong(1), rs.getDouble(2), rs.getString(3), payload));
                }
            }
        } catch (SQLException e) {
            throw new JournalException(path + ": read of stored rows after seq " + afterSeq + " failed: "
                    + e.getMessage(), e);
        }
        return out;
    }

    @Override
    public long lastSeq() {
        return lastSeq;
    }

    /** What the last {@link #replay} read, including the count of corrupt rows. */
    public ReplayStats lastReplay() {
        return lastReplay;
    }

    /**
     * The {@code PRAGMA synchronous} level the last successful commit ran under, as read back
     * from SQLite when it was set; null before the first commit.
     */
    public Durability synchronousOfLastCommit() {
        return lastCommitSynchronous;
    }

    /** The journal mode SQLite reports (expected: {@code wal}). */
    public String journalMode() throws JournalException {
        ensureOpen();
        try {
            return pragma(connection, "PRAGMA journal_mode");
        } catch (SQLException e) {
            throw new JournalException(e.getMessage(), e);
        }
    }

    /** The file this journal writes. */
    public Path path() {
        return path;
    }

    /** True once {@link #close()} ran. */
    public synchronized boolean isClosed() {
        return closed;
    }

    private synchronized void ensureOpen() throws JournalException {
        if (closed) {
            throw new JournalException(path + ": the journal is closed");
        }
    }

    @Override
    public synchronized void close() throws JournalException {
        if (closed) {
            return;
        }
        closed = true;
        try {
            insert.close();
            insertChunk.close();
            begin.close();
            commit.close();
            rollback.close();
            lastRowId.close();
            for (PreparedStatement q : readAfterStatements.values()) {
                q.close();
            }
            if (readStored != null) {
                readStored.close();
            }
            connection.close();
        } catch (SQLException e) {
            throw new JournalException(path + ": close failed: " + e.getMessage(), e);
        }
    }

    private static void closeQuietly(Connection c) {
        try {
            c.close();
        } catch (SQLException ignored) {
            // already failing
        }
    }
}
