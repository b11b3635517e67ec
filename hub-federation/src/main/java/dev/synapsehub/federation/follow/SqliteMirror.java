package dev.synapsehub.federation.follow;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The observed mirror in a file of its own beside the journal ({@code <db>.federation.db},
 * SQLite in WAL mode): per peer its cursor, log end, last success, last error, quarantine, log
 * generation and last event fingerprint, and the claims its log asserts. Each poll commits in one
 * transaction, so a crash leaves the mirror at the end of some complete poll. Used by one
 * follower thread at a time per peer; methods are synchronized.
 */
public final class SqliteMirror implements Mirror {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(SqliteMirror.class);
    /** How long a statement waits on another connection's lock before SQLITE_BUSY, as the journal's readers do. */
    private static final int BUSY_TIMEOUT_MILLIS = 5_000;
    private final Connection c;
    private final Path file;

    private SqliteMirror(Path file, Connection c) {
        this.file = file;
        this.c = c;
    }

    /** The mirror file of the journal {@code db}. */
    public static Path fileFor(Path db) {
        return db.toAbsolutePath().resolveSibling(db.getFileName() + ".federation.db");
    }

    /**
     * Opens (or creates) the mirror beside {@code db}. A new file is made owner-only (0600) before
     * SQLite opens it, as the journal is: SQLite gives its -wal and -shm files the database file's mode.
     * An existing one that others may read (older versions made it 0644) is tightened to 0600 first,
     * with its -wal and -shm files, and the hub logs it once.
     */
    public static SqliteMirror open(Path db) throws MirrorException {
        Path file = fileFor(db);
        tighten(file);
        createPrivately(file);
        try {
            // an operator's offline read (federation observed --db) or a checkpoint may hold the file briefly:
            // the poll waits as long as the readers do, set here rather than left to sqlite-jdbc's 3 s default
            org.sqlite.SQLiteConfig config = new org.sqlite.SQLiteConfig();
            config.setBusyTimeout(BUSY_TIMEOUT_MILLIS);
            Connection c = DriverManager.getConnection("jdbc:sqlite:" + file, config.toProperties());
            try (Statement s = c.createStatement()) {
                s.execute("PRAGMA journal_mode=WAL");
                s.execute("PRAGMA synchronous=NORMAL");
                s.execute("CREATE TABLE IF NOT EXISTS peer (peer TEXT PRIMARY KEY, cursor INTEGER NOT NULL, "
                        + "log_end INTEGER NOT NULL, last_success REAL NOT NULL, quarantine TEXT, "
                        + "generation INTEGER NOT NULL, fingerprint TEXT)");
                s.execute("CREATE TABLE IF NOT EXISTS observed_claim (peer TEXT NOT NULL, task_id TEXT NOT NULL, "
                        + "owner TEXT NOT NULL, namespace TEXT NOT NULL, lease_expires_at REAL NOT NULL, "
                        + "epoch INTEGER NOT NULL, status TEXT NOT NULL, seq INTEGER NOT NULL, kind TEXT NOT NULL, "
                        + "PRIMARY KEY (peer, task_id))");
                addLastError(s);
            }
            return new SqliteMirror(file, c);
        } catch (SQLException e) {
            throw new MirrorException(file + ": cannot open the federation mirror: " + e.getMessage(), e);
        }
    }

    /**
     * Makes an existing mirror and its -wal and -shm files owner-only (0600) where they give group or
     * other any access; POSIX file systems only (elsewhere nothing is done).
     */
    private static void tighten(Path file) {
        if (!file.getFileSystem().supportedFileAttributeViews().contains("posix")) {
            return;
        }
        List<String> tightened = new ArrayList<>();
        for (Path f : List.of(file, file.resolveSibling(file.getFileName() + "-wal"),
                file.resolveSibling(file.getFileName() + "-shm"))) {
            try {
                if (java.nio.file.Files.isSymbolicLink(f)) {
                    continue; // a link's own mode means nothing, and its target is not ours to change
                }
                java.util.Set<java.nio.file.attribute.PosixFilePermission> mode = java.nio.file.Files
                        .getPosixFilePermissions(f, java.nio.file.LinkOption.NOFOLLOW_LINKS);
                String before = java.nio.file.attribute.PosixFilePermissions.toString(mode);
                if (!before.substring(3).equals("------")) {
                    java.nio.file.Files.setPosixFilePermissions(f,
                            java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
                    tightened.add(f.getFileName() + " (was " + before + ")");
                }
            } catch (java.nio.file.NoSuchFileException absent) {
                // not there: nothing to tighten
            } catch (UnsupportedOperationException unsupported) {
                return;
            } catch (java.io.IOException e) { // another user's file, say: the hub still starts, as it did before
                LOG.warn("federation mirror {}: cannot make it owner-only ({}); it stays as it is", f, e.getMessage());
            }
        }
        if (!tightened.isEmpty()) {
            LOG.warn("federation mirror {}: made owner-only (0600), as the journal is: {}", file,
                    String.join(", ", tightened));
        }
    }

    private static void createPrivately(Path file) throws MirrorException {
        if (java.nio.file.Files.exists(file)) {
            return;
        }
        try {
            if (file.getFileSystem().supportedFileAttributeViews().contains("posix")) {
                java.nio.file.Files.createFile(file, java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
                        java.nio.file.attribute.PosixFilePermissions.fromString("rw-------")));
            } else {
                java.nio.file.Files.createFile(file);
            }
        } catch (java.nio.file.FileAlreadyExistsException raced) {
            // made meanwhile: SQLite opens it as it is
        } catch (java.io.IOException e) {
            throw new MirrorException(file + ": cannot create the federation mirror: " + e.getMessage(), e);
        }
    }

    /**
     * Adds {@code peer.last_error} to a mirror written before it was kept (an offline view then
     * showed "last error none" for a peer whose polls were failing).
     */
    private static void addLastError(Statement s) throws SQLException {
        try (ResultSet rs = s.executeQuery("PRAGMA table_info(peer)")) {
            while (rs.next()) {
                if ("last_error".equals(rs.getString("name"))) {
                    return;
                }
            }
        }
        s.execute("ALTER TABLE peer ADD COLUMN last_error TEXT");
    }

    /** The mirror's file. */
    public Path file() {
        return file;
    }

    @Override
    public synchronized List<PeerView> load() throws MirrorException {
        try {
            return read(c, true);
        } catch (SQLException e) {
            throw new MirrorException(file + ": cannot read the federation mirror: " + e.getMessage(), e);
        }
    }

    /**
     * Reads the mirror beside {@code db} without changing it, for an offline view: the file is opened
     * read-only (it may be a live hub's, or a read-only copy), nothing is created or migrated, and a
     * mirror written before {@code last_error} was kept reads with no last error. A hub holding a write
     * lock is waited for (busy timeout), not failed on.
     */
    public static List<PeerView> readOnly(Path db) throws MirrorException {
        Path file = fileFor(db);
        org.sqlite.SQLiteConfig config = new org.sqlite.SQLiteConfig();
        config.setReadOnly(true);
        config.setBusyTimeout(BUSY_TIMEOUT_MILLIS);
        try (Connection ro = DriverManager.getConnection("jdbc:sqlite:" + file, config.toProperties())) {
            boolean hasLastError = false;
            boolean hasPeer = false;
            try (Statement s = ro.createStatement(); ResultSet rs = s.executeQuery("PRAGMA table_info(peer)")) {
                while (rs.next()) {
                    hasPeer = true;
                    hasLastError |= "last_error".equals(rs.getString("name"));
                }
            }
            return hasPeer ? read(ro, hasLastError) : List.of();
        } catch (SQLException e) {
            throw new MirrorException(file + ": cannot read the federation mirror: " + e.getMessage(), e);
        }
    }

    private static List<PeerView> read(Connection c, boolean hasLastError) throws SQLException {
        try (Statement s = c.createStatement()) {
            Map<String, Map<String, ObservedClaim>> claims = new HashMap<>();
            boolean hasClaims;
            try (ResultSet rs = s.executeQuery("SELECT 1 FROM sqlite_master WHERE type = 'table' "
                    + "AND name = 'observed_claim'")) {
                hasClaims = rs.next();
            }
            if (hasClaims) {
                try (ResultSet rs = s.executeQuery("SELECT peer, task_id, owner, namespace, lease_expires_at, epoch, "
                        + "status, seq, kind FROM observed_claim")) {
                    while (rs.next()) {
                        ObservedClaim oc = new ObservedClaim(rs.getString(1), rs.getString(2), rs.getString(3),
                                rs.getString(4), rs.getDouble(5), rs.getLong(6), rs.getString(7), rs.getLong(8),
                                rs.getString(9));
                        claims.computeIfAbsent(oc.peer(), k -> new HashMap<>()).put(oc.taskId(), oc);
                    }
                }
            }
            List<PeerView> out = new ArrayList<>();
            try (ResultSet rs = s.executeQuery("SELECT peer, cursor, log_end, last_success, quarantine, generation"
                    + (hasLastError ? ", last_error" : "") + " FROM peer")) {
                while (rs.next()) {
                    String peer = rs.getString(1);
                    out.add(new PeerView(peer, rs.getLong(2), rs.getLong(3), rs.getDouble(4),
                            hasLastError ? rs.getString(7) : null, Double.NaN, rs.getString(5), rs.getLong(6),
                            claims.getOrDefault(peer, Map.of())));
                }
            }
            return out;
        }
    }

    @Override
    public synchronized String fingerprint(String peer) throws MirrorException {
        try (PreparedStatement q = c.prepareStatement("SELECT fingerprint FROM peer WHERE peer = ?")) {
            q.setString(1, peer);
            try (ResultSet rs = q.executeQuery()) {
                return rs.next() ? rs.getString(1) : null;
            }
        } catch (SQLException e) {
            throw new MirrorException(file + ": cannot read the federation mirror: " + e.getMessage(), e);
        }
    }

    @Override
    public synchronized void commit(PeerView view, String fingerprint, Collection<ObservedClaim> upserts,
            Collection<String> releases) throws MirrorException {
        try {
            c.setAutoCommit(false);
            try (PreparedStatement put = c.prepareStatement("INSERT OR REPLACE INTO observed_claim (peer, task_id, "
                    + "owner, namespace, lease_expires_at, epoch, status, seq, kind) VALUES (?,?,?,?,?,?,?,?,?)");
                 PreparedStatement del = c.prepareStatement("DELETE FROM observed_claim WHERE peer = ? AND task_id = ?")) {
                for (ObservedClaim oc : upserts) {
                    put.setString(1, oc.peer());
                    put.setString(2, oc.taskId());
                    put.setString(3, oc.owner());
                    put.setString(4, oc.namespace());
                    put.setDouble(5, oc.leaseExpiresAt());
                    put.setLong(6, oc.epoch());
                    put.setString(7, oc.status());
                    put.setLong(8, oc.seq());
                    put.setString(9, oc.kind());
                    put.addBatch();
                }
                put.executeBatch();
                for (String task : releases) {
                    del.setString(1, view.peer());
                    del.setString(2, task);
                    del.addBatch();
                }
                del.executeBatch();
            }
            putPeer(view, fingerprint);
            c.commit();
        } catch (SQLException e) {
            rollback();
            throw new MirrorException(file + ": cannot commit a poll of " + view.peer() + ": " + e.getMessage(), e);
        } finally {
            autoCommit();
        }
    }

    @Override
    public synchronized void reset(PeerView view) throws MirrorException {
        try {
            c.setAutoCommit(false);
            try (PreparedStatement del = c.prepareStatement("DELETE FROM observed_claim WHERE peer = ?")) {
                del.setString(1, view.peer());
                del.executeUpdate();
            }
            putPeer(view, null);
            c.commit();
        } catch (SQLException e) {
            rollback();
            throw new MirrorException(file + ": cannot reset " + view.peer() + ": " + e.getMessage(), e);
        } finally {
            autoCommit();
        }
    }

    @Override
    public synchronized void failed(PeerView view) throws MirrorException {
        // only the error: cursor, observation and fingerprint stay as the last good poll left them
        try (PreparedStatement q = c.prepareStatement("INSERT INTO peer (peer, cursor, log_end, last_success, "
                + "quarantine, generation, fingerprint, last_error) VALUES (?,?,?,?,?,?,?,?) "
                + "ON CONFLICT(peer) DO UPDATE SET last_error = excluded.last_error")) {
            bindPeer(q, view, null); // a peer never polled before has no fingerprint yet
            q.executeUpdate();
        } catch (SQLException e) {
            throw new MirrorException(file + ": cannot record a failed poll of " + view.peer() + ": " + e.getMessage(), e);
        }
    }

    private void putPeer(PeerView view, String fingerprint) throws SQLException {
        try (PreparedStatement q = c.prepareStatement("INSERT OR REPLACE INTO peer (peer, cursor, log_end, "
                + "last_success, quarantine, generation, fingerprint, last_error) VALUES (?,?,?,?,?,?,?,?)")) {
            bindPeer(q, view, fingerprint);
            q.executeUpdate();
        }
    }

    /** Binds a peer row's eight columns, in the order both statements name them. */
    private static void bindPeer(PreparedStatement q, PeerView view, String fingerprint) throws SQLException {
        q.setString(1, view.peer());
        q.setLong(2, view.cursor());
        q.setLong(3, view.logEnd());
        q.setDouble(4, view.lastSuccess());
        q.setString(5, view.quarantine());
        q.setLong(6, view.generation());
        q.setString(7, fingerprint);
        q.setString(8, view.lastError());
    }

    private void rollback() {
        try {
            c.rollback();
        } catch (SQLException ignored) {
            // the commit's own failure is what is reported
        }
    }

    private void autoCommit() {
        try {
            c.setAutoCommit(true);
        } catch (SQLException ignored) {
            // next use reports a broken connection
        }
    }

    @Override
    public synchronized void close() {
        try {
            c.close();
        } catch (SQLException ignored) {
            // closing at shutdown
        }
    }
}
