package dev.synapsehub.journal;

import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.event.Durability;
import dev.synapsehub.core.journal.Journal;
import dev.synapsehub.core.journal.JournalException;
import dev.synapsehub.core.journal.JournalInDoubtException;
import dev.synapsehub.core.journal.JournaledEvent;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.sqlite.SQLiteConfig;
import org.sqlite.SQLiteErrorCode;
import org.sqlite.SQLiteException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
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
 * of another application, a damaged one, or one written by a newer schema. One hub at a time:
 * a {@link WriterLock} on {@code <file>-lock} refuses a second writer. SQLite's own locking stays
 * normal, so read-only connections ({@link #openReader()}, the {@code sqlite3} shell) can read
 * committed rows while the hub appends.
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

    // Not final: a statement that failed (sqlite-jdbc closes a COMMIT that failed) is prepared again.
    private PreparedStatement insert;
    private PreparedStatement insertChunk;
    private PreparedStatement begin;
    private PreparedStatement commit;
    private PreparedStatement lastRowId;
    private final EventCodec codec = new EventCodec();
    private final EventRangeQuery rangeQuery;
    /** Held while open: one hub per journal file (see {@link WriterLock}); null when opened read-only. */
    private final WriterLock writerLock;
    /** Opened by {@link #openReadOnly}: nothing may be written through this object. */
    private final boolean readOnly;
    /** Read-only only: a running hub held the writer lock when this was opened. */
    private final boolean hubRunning;
    private StoredRowsQuery storedRows; // readStored's, on the appending thread
    private final long progressIntervalMillis;
    private ReplayPipeline replayPipeline = ReplayPipeline.DEFAULT;
    private java.util.concurrent.ThreadFactory replayThreads = Thread::new;
    /** Replays that ran on the caller's thread alone because their threads could not be started. */
    private final java.util.concurrent.atomic.AtomicLong replayThreadFallbacks =
            new java.util.concurrent.atomic.AtomicLong();
    private volatile long lastSeq;
    private Durability synchronousLevel;
    private volatile Durability lastCommitSynchronous;
    private volatile ReplayStats lastReplay = ReplayStats.NONE;
    private final SnapshotStore snapshots;
    /** Corrupt rows counted by the replays a loaded snapshot was built from (see {@link #carryCorruption}). */
    private volatile long carriedCorrupt;
    private volatile long carriedFirstCorrupt;
    private boolean closed;

    private SqliteJournal(Path path, Connection connection, long progressIntervalMillis, WriterLock writerLock)
            throws SQLException {
        this(path, connection, progressIntervalMillis, writerLock, false, false);
    }

    private SqliteJournal(Path path, Connection connection, long progressIntervalMillis, WriterLock writerLock,
                          boolean readOnly, boolean hubRunning) throws SQLException {
        this.path = path;
        this.connection = connection;
        this.writerLock = writerLock;
        this.readOnly = readOnly;
        this.hubRunning = hubRunning;
        this.rangeQuery = new EventRangeQuery(path, connection);
        this.progressIntervalMillis = progressIntervalMillis;
        prepareStatements();
        // sqlite_sequence keeps the highest seq ever handed out, even once retention deleted the rows
        try (Statement s = connection.createStatement();
             ResultSet rs = s.executeQuery("SELECT MAX(COALESCE((SELECT MAX(seq) FROM events), 0),"
                     + " COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'events'), 0))")) {
            rs.next();
            this.lastSeq = rs.getLong(1);
        }
        this.snapshots = new SnapshotStore(this);
    }

    private void prepareStatements() throws SQLException {
        insert = connection.prepareStatement(insertSql(1));
        insertChunk = connection.prepareStatement(insertSql(CHUNK));
        begin = connection.prepareStatement("BEGIN IMMEDIATE");
        commit = connection.prepareStatement("COMMIT");
        lastRowId = connection.prepareStatement("SELECT last_insert_rowid()");
    }

    private void closeStatements() {
        for (PreparedStatement statement : List.of(insert, insertChunk, begin, commit, lastRowId)) {
            try {
                statement.close();
            } catch (SQLException ignored) {
                // a failed statement may already be closed
            }
        }
    }

    private static String insertSql(int rows) {
        StringBuilder sql = new StringBuilder("INSERT INTO events(ts, kind, durability, payload) VALUES (?, ?, ?, ?)");
        for (int i = 1; i < rows; i++) {
            sql.append(", (?, ?, ?, ?)");
        }
        return sql.toString();
    }

    /**
     * Loads and initializes what opening any journal needs before it touches a file: sqlite-jdbc's
     * driver, its native library and its connection settings (date formats, locale data), and the
     * event codec's JSON mapper. Together some 100-150 ms of a start's critical path (JVM class
     * initialization, which another thread then waits for rather than repeats), so a hub start runs
     * this on a thread of its own while it still reads its configuration. It opens, creates and
     * locks nothing; a failure is left for {@link #open} to meet again and report.
     */
    public static void loadLibraries() {
        try {
            Class.forName("org.sqlite.JDBC");
            org.sqlite.SQLiteJDBCLoader.initialize();
            new org.sqlite.SQLiteConfig();
            new EventCodec();
        } catch (Exception | LinkageError e) {
            // open() loads the same and reports what fails there, with the journal's name
        }
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
        WriterLock lock = WriterLock.acquire(file);
        Connection c;
        try {
            Properties props = new Properties();
            // sqlite-jdbc otherwise runs a regex and prepares, steps and finalizes a
            // "SELECT last_insert_rowid()" after every INSERT; appendRows reads it once per batch
            props.setProperty("jdbc.get_generated_keys", "false");
            c = DriverManager.getConnection("jdbc:sqlite:" + file, props);
        } catch (SQLException e) {
            lock.release();
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
            SqliteJournal journal = new SqliteJournal(file, c, progressIntervalMillis, lock);
            journal.setSynchronous(Durability.FULL);
            return journal;
        } catch (JournalException e) {
            closeQuietly(c);
            lock.release();
            throw e;
        } catch (SQLException e) {
            closeQuietly(c);
            lock.release();
            throw new JournalException(file + ": cannot open the journal: " + e.getMessage(), e);
        }
    }

    /**
     * Opens an existing journal for reading only (the journal tools): no WAL switch, no schema
     * created, no migration, no writer lock taken nor lock file created, so it works on read-only
     * storage and never changes the file. Everything read through it is one read transaction,
     * a consistent view even while a hub appends (see {@link #hubRunning()}). Anything that would
     * write fails.
     *
     * @throws JournalRefusedException when the file is missing, empty, not SQLite, foreign, of
     *     another hub's layout, written by a newer schema, or needs a migration a hub's start would
     *     apply; the message says which. The file was not modified.
     */
    public static SqliteJournal openReadOnly(Path path) throws JournalException {
        Path file = path.toAbsolutePath();
        if (!Files.exists(file)) {
            throw new JournalRefusedException(file + ": no such journal file");
        }
        checkHeader(file);
        try {
            if (Files.size(file) == 0) {
                throw new JournalRefusedException(file + ": an empty file (0 bytes), not a journal; nothing to read."
                        + " The file was not modified.");
            }
        } catch (IOException e) {
            throw new JournalException(file + ": cannot read the journal file: " + WriterLock.reason(e), e);
        }
        boolean hub = WriterLock.probe(file) == WriterLock.Holder.HUB;
        Connection c = readOnlyConnection(file, hub);
        try {
            JournalSchema.Inspection found;
            try {
                found = JournalSchema.inspect(c, file.toString());
            } catch (SQLException e) {
                throw new JournalRefusedException(file + ": not a readable SQLite database (" + e.getMessage()
                        + "); refusing to read it. The file was not modified.", e);
            }
            switch (found.kind()) {
                case EMPTY -> throw new JournalRefusedException(file + ": an SQLite database without tables, not a"
                        + " journal; nothing to read. The file was not modified.");
                case REFERENCE_V0 -> throw new JournalRefusedException(file + ": another wire-v2 hub's database (the"
                        + " reference layout: events(seq, ts, kind, payload), no meta table), not a synapse-hub journal;"
                        + " take it over with synapse-hub import --from " + file + " --db NEW.db. The file was not"
                        + " modified.");
                case CURRENT_OR_OLDER -> {
                    if (found.version() < JournalSchema.CURRENT_VERSION) {
                        throw new JournalRefusedException(file + ": a synapse-hub journal of schema version "
                                + found.version() + ", older than this hub's " + JournalSchema.CURRENT_VERSION
                                + "; a hub starting on it migrates it in place, the journal tools only read current"
                                + " journals. The file was not modified.");
                    }
                }
            }
            // one read transaction for everything the tool reads: a consistent view if a hub appends meanwhile
            c.setAutoCommit(false);
            return new SqliteJournal(file, c, 2_000, null, true, hub);
        } catch (JournalException e) {
            closeQuietly(c);
            throw e;
        } catch (SQLException e) {
            closeQuietly(c);
            throw new JournalException(file + ": cannot read the journal: " + e.getMessage(), e);
        }
    }

    /**
     * A read-only connection, first as any reader; when that cannot open the file because SQLite
     * cannot create the WAL's {@code -shm}/{@code -wal} beside it (read-only storage) and neither
     * exists, no process has it open in WAL mode, so it is read as immutable (no locks, no sidecars).
     */
    private static Connection readOnlyConnection(Path file, boolean hubRunning) throws JournalException {
        JournalException first;
        try {
            Connection c = SqliteJournalReader.readOnlyConnection(file);
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM sqlite_master")) {
                rs.next();
                return c;
            } catch (SQLException e) {
                closeQuietly(c);
                first = new JournalException(file + ": cannot read the journal: " + e.getMessage(), e);
            }
        } catch (JournalException e) {
            first = e;
        }
        boolean sidecars = Files.exists(file.resolveSibling(file.getFileName() + "-wal"))
                || Files.exists(file.resolveSibling(file.getFileName() + "-shm"));
        if (hubRunning || sidecars || Files.isWritable(file.getParent())) {
            throw first;
        }
        SQLiteConfig config = new SQLiteConfig();
        config.setReadOnly(true);
        try {
            Connection c = config.createConnection("jdbc:sqlite:" + file.toUri() + "?immutable=1");
            LOG.log(System.Logger.Level.DEBUG, file + ": read as immutable (read-only storage)");
            return c;
        } catch (SQLException e) {
            throw first;
        }
    }

    /** Read-only: whether a running hub held the file's writer lock when it was opened (its view may lag the hub). */
    public boolean hubRunning() {
        return hubRunning;
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
    static void createPrivately(Path file) throws JournalException {
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
        } catch (NoSuchFileException e) {
            // the JDK's message is the file's own name: say which directory is missing and what to do
            Path dir = file.getParent();
            throw new JournalException(file + ": cannot create the journal file: the directory " + dir
                    + " does not exist; create it (mkdir -p " + dir + ") or pass another --db path", e);
        } catch (IOException e) {
            throw new JournalException(file + ": cannot create the journal file: " + WriterLock.reason(e), e);
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
        return append(batch, null);
    }

    /**
     * Appends a copy of events that were made durable elsewhere first (a mesh node's Raft log,
     * which fsyncs every entry before it counts), committed at {@code synchronous=NORMAL} whatever
     * the events ask for: the copy is not the record of truth, so it does not pay a second fsync
     * per commit. A crash of the process loses none of it (WAL); a crash of the host may lose the
     * newest rows, which the owner copies again from the record of truth when it restarts.
     */
    public List<JournaledEvent> appendCopy(List<CoordinationEvent> batch) throws JournalException {
        return append(batch, Durability.NORMAL);
    }

    /**
     * Makes every row committed so far durable, copies included: one {@code synchronous=FULL}
     * commit, which syncs the whole WAL and so the NORMAL commits before it, recording the seq
     * it covers (meta {@code copies_synced_through}). A mesh node calls it before a Raft snapshot
     * covers its copied rows, since the Raft log forgets them once the snapshot is taken. On the
     * appending thread.
     */
    public void syncCopies() throws JournalException {
        long through = lastSeq;
        transaction(Durability.FULL, "syncing copied rows through seq " + through, c -> {
            try (PreparedStatement mark = c.prepareStatement(
                    "INSERT OR REPLACE INTO meta(key, value) VALUES ('copies_synced_through', ?)")) {
                // the time makes it a real change, so the commit writes and syncs the WAL
                mark.setString(1, through + "/" + System.currentTimeMillis());
                mark.executeUpdate();
            }
            return null;
        });
    }

    /** Appends {@code batch} at {@code level}, or at {@link #levelOf} its events when null. */
    private List<JournaledEvent> append(List<CoordinationEvent> batch, Durability level) throws JournalException {
        ensureWritable();
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
        long first = appendRows(rows, level == null ? levelOf(rows) : level);
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
        return appendRows(rows, levelOf(rows));
    }

    /** Writes {@code rows} in one transaction at {@code level}; returns the seq of the first row. */
    private long appendRows(List<Row> rows, Durability level) throws JournalException {
        long[] first = {lastSeq + 1};
        long last;
        try {
            last = transaction(level, "append of " + rows.size() + " events", c -> {
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
                long lastRow;
                try (ResultSet rs = lastRowId.executeQuery()) {
                    rs.next();
                    lastRow = rs.getLong(1);
                }
                first[0] = lastRow - rows.size() + 1;
                if (first[0] <= lastSeq) {
                    throw new SQLException("sequence went backwards: first " + first[0] + " after " + lastSeq);
                }
                return lastRow;
            });
        } catch (JournalInDoubtException doubt) {
            throw new JournalInDoubtException(doubt.getMessage(), first[0], doubt.getCause());
        }
        lastSeq = last;
        lastCommitSynchronous = level;
        return last - rows.size() + 1;
    }

    /**
     * True when a failed COMMIT cannot have made its batch durable: the WAL's commit frame was
     * never completely written (a write error, a full disk), so no recovery can see the batch.
     * A failed fsync is the opposite: every frame may be on the disk.
     */
    private static boolean unwritten(SQLException e) {
        if (!(e instanceof SQLiteException failure)) {
            return false;
        }
        SQLiteErrorCode code = failure.getResultCode();
        return code == SQLiteErrorCode.SQLITE_FULL || code == SQLiteErrorCode.SQLITE_IOERR_WRITE
                || code == SQLiteErrorCode.SQLITE_IOERR_SHORT_READ || code == SQLiteErrorCode.SQLITE_BUSY;
    }

    /**
     * Leaves the connection usable after a failed append: rolls back what is open and prepares
     * the statements again (sqlite-jdbc closes a statement whose step failed, and a prepared
     * ROLLBACK would be one of them), so the journal recovers once the fault clears.
     */
    private void recoverAfter(SQLException failure, boolean inTransaction) {
        if (inTransaction) {
            try (Statement s = connection.createStatement()) {
                s.execute("ROLLBACK");
            } catch (SQLException rollbackFailure) {
                // SQLite rolls back by itself after some I/O errors: "no transaction is active"
                failure.addSuppressed(rollbackFailure);
            }
        }
        closeStatements();
        try {
            prepareStatements();
        } catch (SQLException prepareFailure) {
            failure.addSuppressed(prepareFailure);
        }
    }

    @Override
    public boolean settle(long firstSeq) throws JournalException {
        ensureWritable();
        try {
            // A commit of our own: it proves the journal writes again, and its WAL frames take the
            // place of the doubtful batch's, so no recovery can ever find that batch afterwards.
            setSynchronous(Durability.FULL);
            begin.executeUpdate();
            try (PreparedStatement s = connection.prepareStatement(
                    "INSERT OR REPLACE INTO meta(key, value) VALUES ('last_settled', ?)")) {
                s.setString(1, Long.toString(System.currentTimeMillis()) + "/" + firstSeq); // a real change: a real write
                s.executeUpdate();
            }
            commit.executeUpdate();
            long found;
            try (Statement s = connection.createStatement();
                 ResultSet rs = s.executeQuery("SELECT COALESCE(MAX(seq), 0) FROM events")) {
                rs.next();
                found = rs.getLong(1);
            }
            lastSeq = Math.max(lastSeq, found);
            return found >= firstSeq;
        } catch (SQLException e) {
            recoverAfter(e, true);
            throw new JournalException(path + ": the journal still cannot commit: " + e.getMessage(), e);
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
        replayAfter(0, sink);
    }

    /**
     * Streams every stored event with {@code seq > afterSeq} in sequence order (the journal tail
     * after a snapshot), then records what was read in {@link #lastReplay()}.
     *
     * <p>No row stops a replay: a row whose payload is not valid for its kind (see
     * {@link PayloadReader}), or whose event the sink refuses with an exception, is skipped,
     * logged with its seq, and counted in {@link ReplayStats#corrupt()}. A skipped claim-family
     * row's epoch, where its text still shows one, goes to {@link ReplayStats#epochFloor()}: the
     * caller raises the state's epoch counter to it, so no epoch is issued twice (INV-EF-1).
     */
    public void replayAfter(long afterSeq, Consumer<JournaledEvent> sink) throws JournalException {
        ensureOpen();
        long expected = Math.max(0, lastSeq - afterSeq);
        ReplayProgress progress = new ReplayProgress(LOG, expected, progressIntervalMillis);
        long rows = 0;
        long replayed = 0;
        long unknown = 0;
        long corrupt = 0;
        long firstCorrupt = 0;
        long epochFloor = 0;
        try (ReplayFeed feed = expected >= replayPipeline.fromRows()
                ? ReplayFeed.pipelined(connection, afterSeq, codec, replayPipeline.batchRows(), replayPipeline.batches(),
                        replayThreads, replayThreadFallbacks::incrementAndGet)
                : ReplayFeed.inline(connection, afterSeq, codec, replayPipeline.batchRows())) {
            boolean last = false;
            while (!last) {
                ReplayRows batch = feed.next();
                for (int i = 0; i < batch.size; i++) {
                    rows++;
                    long seq = batch.seq[i];
                    String fault = batch.fault[i];
                    if (fault == null) {
                        if (batch.event[i] == null) {
                            unknown++;
                        } else {
                            fault = deliver(sink, new JournaledEvent(seq, batch.event[i]));
                            if (fault == null) {
                                replayed++;
                            }
                        }
                    }
                    if (fault != null) {
                        corrupt++;
                        if (firstCorrupt == 0) {
                            firstCorrupt = seq;
                        }
                        // one line per row: a JSON parser's message continues on a second line ("at [Source: …]")
                        LOG.log(System.Logger.Level.ERROR, "journal row seq=" + seq + " kind=" + batch.kind[i] + " "
                                + fault.replaceAll("\\s*\\R\\s*", " ") + epochNote(batch, i));
                        epochFloor = Math.max(epochFloor, skippedEpoch(batch, i));
                    }
                    if ((rows & 4095) == 0) {
                        progress.update(rows);
                    }
                }
                if (batch.failure != null) {
                    throw batch.failure;
                }
                last = batch.last;
                feed.recycle(batch);
            }
        } catch (SQLException e) {
            throw new JournalException(path + ": replay failed after " + rows + " rows: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new JournalException(path + ": replay interrupted after " + rows + " rows", e);
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new JournalException(path + ": replay failed after " + rows + " rows: " + e, e);
        }
        lastReplay = new ReplayStats(rows, replayed, unknown, corrupt, firstCorrupt, progress.elapsedSeconds(),
                epochFloor);
        LOG.log(corrupt == 0 ? System.Logger.Level.INFO : System.Logger.Level.WARNING,
                "journal replay done: " + lastReplay);
    }

    /** The epoch a skipped row of a claim-family kind still shows, 0 for other kinds or when none reads. */
    private static long skippedEpoch(ReplayRows batch, int i) {
        if (!EpochFloor.carriesEpoch(batch.kind[i])) {
            return 0;
        }
        return batch.payload[i] != null ? EpochFloor.read(batch.payload[i]) : EpochFloor.read(batch.text[i]);
    }

    /** What the skipped row means for the epoch counter, said in its log line (claim-family kinds only). */
    private static String epochNote(ReplayRows batch, int i) {
        if (!EpochFloor.carriesEpoch(batch.kind[i])) {
            return "";
        }
        long epoch = skippedEpoch(batch, i);
        return epoch > 0 ? "; its epoch " + epoch + " still raises the epoch counter, so it is never issued again"
                : "; no epoch can be read from it, so it raises no epoch floor";
    }

    /**
     * How a replay of {@code fromRows} rows or more runs on three threads (read, decode, apply):
     * {@code batches} batches of {@code batchRows} rows in flight. Shorter replays (the tail
     * after a snapshot, usually) read and decode on the caller's thread.
     */
    public record ReplayPipeline(long fromRows, int batchRows, int batches) {
        public ReplayPipeline {
            // a batch of no rows would never reach the end of the journal; no batch in flight, never start
            if (fromRows < 0 || batchRows < 1 || batches < 1) {
                throw new IllegalArgumentException("replay pipeline needs fromRows >= 0, batchRows >= 1, batches >= 1: "
                        + fromRows + ", " + batchRows + ", " + batches);
            }
        }

        public static final ReplayPipeline DEFAULT = new ReplayPipeline(20_000, 1_024, 8);
        /** Never on threads of its own. */
        public static final ReplayPipeline INLINE = new ReplayPipeline(Long.MAX_VALUE, 1_024, 8);
    }

    /** Where a pipelined replay gets its two threads (tests: a factory that cannot make them). */
    void replayThreads(java.util.concurrent.ThreadFactory threads) {
        this.replayThreads = threads;
    }

    /** Sets how replays run (tests: a pipeline over a few rows; the replay bench: inline against pipelined). */
    public void replayPipeline(ReplayPipeline pipeline) {
        this.replayPipeline = pipeline;
    }

    /**
     * Hands a decoded event to the sink. The codec validates every event, so a refusal here is a
     * defect; it is still only a skipped row, never an aborted start-up.
     *
     * @return null when accepted, else why the row was skipped
     */
    private static String deliver(Consumer<JournaledEvent> sink, JournaledEvent event) {
        try {
            sink.accept(event);
            return null;
        } catch (RuntimeException e) {
            return "was refused by the state and skipped: " + e;
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>On the appending thread; the hub reads history through {@link #openReader()} instead, on
     * a thread of its own. The read is bounded by {@code limit} and walks the primary-key range
     * {@code seq > afterSeq} with a prepared statement. Undecodable rows are skipped (they are
     * reported by replay).
     */
    @Override
    public List<JournaledEvent> readAfter(long afterSeq, int limit, Set<String> kinds) throws JournalException {
        ensureOpen();
        return rangeQuery.readAfter(afterSeq, limit, kinds);
    }

    /**
     * A read-only connection on this file (WAL readers see committed rows while we append); it also
     * reads as {@link #readStored}, for serving a peer's log pull without the writer.
     */
    @Override
    public SqliteJournalReader openReader() throws JournalException {
        ensureOpen();
        return SqliteJournalReader.open(path);
    }

    /**
     * The stored rows with {@code seq > afterSeq}, every kind, undecoded, in seq order: at most
     * {@code maxEvents}, and no more rows once their payloads' UTF-8 bytes reach {@code maxBytes}
     * (the first row always comes). Same threading rule as {@link #readAfter}: on the appending
     * thread, through {@code CoordinationActor.read}; a peer's log pull is served through
     * {@link #openReader()} instead.
     */
    public List<StoredEvent> readStored(long afterSeq, int maxEvents, long maxBytes) throws JournalException {
        ensureOpen();
        if (storedRows == null) {
            storedRows = new StoredRowsQuery(path, connection);
        }
        return storedRows.read(afterSeq, maxEvents, maxBytes);
    }

    @Override
    public long lastSeq() {
        return lastSeq;
    }

    /** What the last {@link #replay} read, including the count of corrupt rows. */
    public ReplayStats lastReplay() {
        return lastReplay;
    }

    @Override
    public long replayThreadFallbacks() {
        return replayThreadFallbacks.get();
    }

    @Override
    public long replayEpochFloor() {
        return lastReplay.epochFloor();
    }

    @Override
    public long corruptRows() {
        return carriedCorrupt + lastReplay.corrupt();
    }

    @Override
    public long firstCorruptSeq() {
        return carriedFirstCorrupt != 0 ? carriedFirstCorrupt : lastReplay.firstCorruptSeq();
    }

    /**
     * Adds the corrupt rows a loaded snapshot's state was built past, so that {@link #corruptRows}
     * keeps reporting them after a restart from the snapshot.
     */
    void carryCorruption(long rows, long firstSeq) {
        carriedCorrupt = rows;
        carriedFirstCorrupt = firstSeq;
    }

    /**
     * The highest seq retention has deleted (meta {@code compacted_through}); 0 when every row
     * since the first is still here. Rows up to it can only be rebuilt from a snapshot.
     */
    public long compactedThrough() throws JournalException {
        return query("reading compacted_through", c -> {
            try (Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery("SELECT value FROM meta WHERE key = 'compacted_through'")) {
                return rs.next() ? Long.parseLong(rs.getString(1)) : 0L;
            } catch (NumberFormatException e) {
                throw new SQLException("unreadable meta compacted_through", e);
            }
        });
    }

    /**
     * Numbers the next append from {@code seq + 1} although the rows up to {@code seq} were never
     * written here: a mesh node that installed its leader's snapshot holds them in its state but
     * can no longer copy them from the Raft log. Recorded like rows retention deleted (meta
     * {@code compacted_through}), so readers know they can only come from a snapshot. On the
     * appending thread; a seq at or below {@link #lastSeq()} changes nothing.
     */
    public void advanceTo(long seq) throws JournalException {
        if (seq <= lastSeq) {
            return;
        }
        transaction(Durability.FULL, "advancing the numbering to seq " + seq, c -> {
            try (Statement s = c.createStatement()) {
                s.executeUpdate("DELETE FROM sqlite_sequence WHERE name = 'events'");
            }
            try (PreparedStatement next = c.prepareStatement("INSERT INTO sqlite_sequence(name, seq) VALUES ('events', ?)");
                 PreparedStatement mark = c.prepareStatement(
                         "INSERT OR REPLACE INTO meta(key, value) VALUES ('compacted_through', ?)")) {
                next.setLong(1, seq);
                next.executeUpdate();
                mark.setString(1, Long.toString(seq));
                mark.executeUpdate();
            }
            return null;
        });
        lastSeq = seq;
    }

    /** A stored row exactly as SQLite holds it (values keep their storage class). */
    record RawRow(long seq, Object ts, Object kind, Object durability, Object payload) {
    }

    /** Up to {@code limit} rows with {@code afterSeq < seq <= throughSeq}, in seq order, unchanged (backup). */
    List<RawRow> readRaw(long afterSeq, long throughSeq, int limit) throws JournalException {
        return query("reading rows for a backup", c -> {
            List<RawRow> out = new ArrayList<>(Math.min(limit, 16_384));
            try (PreparedStatement q = c.prepareStatement("SELECT seq, ts, kind, durability, payload FROM events"
                    + " WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT ?")) {
                q.setLong(1, afterSeq);
                q.setLong(2, throughSeq);
                q.setInt(3, limit);
                try (ResultSet rs = q.executeQuery()) {
                    while (rs.next()) {
                        out.add(new RawRow(rs.getLong(1), rs.getObject(2), rs.getObject(3), rs.getObject(4),
                                rs.getObject(5)));
                    }
                }
            }
            return out;
        });
    }

    /** Retained rows per kind, by kind (the journal tools). */
    public Map<String, Long> rowsByKind() throws JournalException {
        return query("counting rows by kind", c -> {
            Map<String, Long> out = new java.util.TreeMap<>();
            try (Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery("SELECT kind, COUNT(*) FROM events GROUP BY kind")) {
                while (rs.next()) {
                    out.put(String.valueOf(rs.getString(1)), rs.getLong(2));
                }
            }
            return out;
        });
    }

    /** The state snapshots stored in this file (writer thread only, like appends). */
    public SnapshotStore snapshots() {
        return snapshots;
    }

    /** Work on the writer's connection. */
    interface SqlWork<T> {
        T run(Connection c) throws SQLException;
    }

    /**
     * Runs {@code work} in one transaction committed at {@code level}, rolled back on failure;
     * for snapshot and retention upkeep, on the appending thread.
     */
    <T> T transaction(Durability level, String what, SqlWork<T> work) throws JournalException {
        ensureWritable();
        boolean inTransaction = false;
        boolean committing = false;
        try {
            setSynchronous(level);
            begin.executeUpdate();
            inTransaction = true;
            T result = work.run(connection);
            committing = true;
            commit.executeUpdate();
            inTransaction = false;
            return result;
        } catch (SQLException e) {
            recoverAfter(e, inTransaction);
            if (committing && !unwritten(e)) {
                throw new JournalInDoubtException(path + ": the commit of the " + what + " failed after it was"
                        + " written (" + e.getMessage() + "); whether it is durable is not known yet", -1, e);
            }
            throw new JournalException(path + ": " + what + " failed; nothing was committed: " + e.getMessage(), e);
        }
    }

    /** Runs a read on the writer's connection, outside any transaction. */
    <T> T query(String what, SqlWork<T> work) throws JournalException {
        ensureOpen();
        try {
            return work.run(connection);
        } catch (SQLException e) {
            throw new JournalException(path + ": " + what + " failed: " + e.getMessage(), e);
        }
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

    private void ensureWritable() throws JournalException {
        ensureOpen();
        if (readOnly) {
            throw new JournalException(path + ": opened read-only; nothing is written to it");
        }
    }

    @Override
    public synchronized void close() throws JournalException {
        if (closed) {
            return;
        }
        closed = true;
        try {
            closeStatements();
            rangeQuery.close();
            if (storedRows != null) {
                storedRows.close();
            }
            if (readOnly) {
                connection.rollback(); // ends the read transaction
            }
            connection.close();
        } catch (SQLException e) {
            throw new JournalException(path + ": close failed: " + e.getMessage(), e);
        } finally {
            if (writerLock != null) {
                writerLock.release();
            }
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
