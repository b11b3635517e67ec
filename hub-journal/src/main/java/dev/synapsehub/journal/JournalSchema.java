package dev.synapsehub.journal;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The journal's on-disk schema, its identification and its migrations.
 *
 * <h2>Schema version 1</h2>
 * <pre>
 * PRAGMA application_id = 0x53594E48           -- 'SYNH': marks the file as a synapse-hub journal
 * PRAGMA user_version   = 1                    -- mirrors meta.schema_version
 * CREATE TABLE meta (
 *   key   TEXT PRIMARY KEY,                    -- 'magic' = 'synapse-hub-journal', 'schema_version' = '1'
 *   value TEXT NOT NULL);
 * CREATE TABLE events (
 *   seq        INTEGER PRIMARY KEY AUTOINCREMENT, -- global, monotonic, never reused
 *   ts         REAL NOT NULL,                     -- hub time of the decision, Unix seconds
 *   kind       TEXT NOT NULL,                     -- wire contract §12.3 kind label
 *   durability TEXT NOT NULL,                     -- FULL or NORMAL (INV-JA-4)
 *   payload    TEXT NOT NULL);                    -- compact ASCII-escaped JSON (§12.4, {@link EventCodec})
 * </pre>
 * Idempotency records are {@code idempotency} events in the same table, committed in the
 * mutation's transaction; the ledger is rebuilt from them on replay (INV-CR-1).
 *
 * <h2>Schema version 2: state snapshots and compaction</h2>
 * <pre>
 * CREATE TABLE snapshots (
 *   id         INTEGER PRIMARY KEY AUTOINCREMENT,
 *   seq        INTEGER NOT NULL,                 -- the journal seq the state covers
 *   created_at REAL NOT NULL,                    -- hub time it was taken, Unix seconds
 *   format     INTEGER NOT NULL,                 -- {@link SnapshotCodec#FORMAT}
 *   bytes      INTEGER NOT NULL,                 -- body length (0 while incomplete)
 *   chunks     INTEGER NOT NULL,                 -- number of chunk rows (0 while incomplete)
 *   crc32c     INTEGER NOT NULL,                 -- CRC-32C of the body (0 while incomplete)
 *   complete   INTEGER NOT NULL);                -- 1 once every chunk is written
 * CREATE TABLE snapshot_chunks (
 *   snapshot_id INTEGER NOT NULL, idx INTEGER NOT NULL, data BLOB NOT NULL,
 *   PRIMARY KEY (snapshot_id, idx));
 * meta 'compacted_through' = the highest seq deleted by retention (absent: none)
 * </pre>
 * A snapshot is written in chunks, each its own short transaction, and becomes visible only
 * when a last transaction marks it complete with its length and checksum (see
 * {@link SnapshotStore}).
 *
 * <h2>Schema version 3: an index for the mailbox replay scan</h2>
 * <pre>
 * CREATE INDEX events_chat_seq ON events(seq) WHERE kind = 'chat';
 * </pre>
 * A registration's mailbox replay and an ack read the chat rows after a seq (contract §8.3);
 * over the primary key alone that walks every row of every kind after it. The partial index
 * holds the chat rows only, so the scan reads just those, and appending other kinds costs
 * nothing more ({@link EventRangeQuery} names the kind literally, as a partial index needs).
 *
 * <h2>Schema version 4: an index of the partition audit rows</h2>
 * <pre>
 * CREATE INDEX events_partition_seq ON events(seq) WHERE kind IN ('multihub_heal', 'multihub_partition');
 * </pre>
 * Every start restores the unresolved multi-hub partitions from their audit rows; without an
 * index that read walked every row of the journal (2 s of the writer's CPU, and the whole
 * file read from disk, at 10 million rows). The partial index holds those rare rows only.
 *
 * <h2>Versions and migrations</h2>
 * Version 0 is the reference hub's layout: an {@code events(seq, ts, kind, payload)} table
 * without a {@code durability} column, no {@code meta} table and no application id.
 * {@link #MIGRATIONS} holds one step per version, applied in order inside one transaction.
 * A file whose schema version is newer than {@link #CURRENT_VERSION} is refused, never
 * downgraded. A file with another application id, or an unmarked file with other tables, is
 * foreign and refused without being touched.
 */
public final class JournalSchema {
    /** SQLite {@code application_id} of a synapse-hub journal: ASCII 'SYNH'. */
    public static final int APPLICATION_ID = 0x53594E48;
    /** The {@code meta.magic} value. */
    public static final String MAGIC = "synapse-hub-journal";
    /** The schema version this code writes. */
    public static final int CURRENT_VERSION = 4;
    /** The partial index of chat rows by seq (schema version 3). */
    static final String CHAT_INDEX = "events_chat_seq";
    /** The partial index of the partition audit rows by seq (schema version 4). */
    static final String PARTITION_INDEX = "events_partition_seq";
    /** The kinds {@link #PARTITION_INDEX} holds, sorted, as the range query names them. */
    static final List<String> PARTITION_KINDS = List.of("multihub_heal", "multihub_partition");
    /** The condition of {@link #PARTITION_INDEX}; a query must repeat it literally to use the index. */
    static final String PARTITION_CONDITION = "kind IN ('multihub_heal', 'multihub_partition')";

    /** One migration step: brings a file at {@code from} to {@code from + 1}. */
    record Migration(int from, String description, List<String> statements) {
    }

    /** Every step, by source version. */
    static final List<Migration> MIGRATIONS = List.of(
            new Migration(0, "reference layout -> v1: durability column, meta table, application id",
                    List.of(
                            "ALTER TABLE events ADD COLUMN durability TEXT NOT NULL DEFAULT 'FULL'",
                            "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
                            "INSERT OR REPLACE INTO meta(key, value) VALUES ('magic', '" + MAGIC + "')")),
            new Migration(1, "v1 -> v2: state snapshot tables",
                    List.of(
                            "CREATE TABLE snapshots (id INTEGER PRIMARY KEY AUTOINCREMENT, seq INTEGER NOT NULL,"
                                    + " created_at REAL NOT NULL, format INTEGER NOT NULL, bytes INTEGER NOT NULL,"
                                    + " chunks INTEGER NOT NULL, crc32c INTEGER NOT NULL, complete INTEGER NOT NULL)",
                            "CREATE TABLE snapshot_chunks (snapshot_id INTEGER NOT NULL, idx INTEGER NOT NULL,"
                                    + " data BLOB NOT NULL, PRIMARY KEY (snapshot_id, idx))")),
            new Migration(2, "v2 -> v3: index of chat rows for the mailbox replay scan",
                    List.of("CREATE INDEX IF NOT EXISTS " + CHAT_INDEX + " ON events(seq) WHERE kind = 'chat'")),
            new Migration(3, "v3 -> v4: index of the partition audit rows read at every start",
                    List.of("CREATE INDEX IF NOT EXISTS " + PARTITION_INDEX + " ON events(seq) WHERE "
                            + PARTITION_CONDITION)));

    private static final List<String> CREATE_V1 = List.of(
            "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
            "CREATE TABLE events (seq INTEGER PRIMARY KEY AUTOINCREMENT, ts REAL NOT NULL, kind TEXT NOT NULL,"
                    + " durability TEXT NOT NULL, payload TEXT NOT NULL)",
            "INSERT INTO meta(key, value) VALUES ('magic', '" + MAGIC + "')");

    private JournalSchema() {
    }

    /** What an existing file turned out to be. */
    enum Kind { EMPTY, CURRENT_OR_OLDER, REFERENCE_V0 }

    /** The result of {@link #inspect}. */
    record Inspection(Kind kind, int version) {
    }

    /**
     * Identifies the database on {@code c} without writing to it.
     *
     * @return the file's kind and schema version
     * @throws JournalRefusedException when the file is foreign or newer than this code
     */
    static Inspection inspect(Connection c, String path) throws SQLException, JournalRefusedException {
        int appId;
        Set<String> tables = new HashSet<>();
        try (Statement s = c.createStatement()) {
            try (ResultSet rs = s.executeQuery("PRAGMA application_id")) {
                appId = rs.next() ? rs.getInt(1) : 0;
            }
            try (ResultSet rs = s.executeQuery("SELECT name FROM sqlite_master WHERE type = 'table'")) {
                while (rs.next()) {
                    tables.add(rs.getString(1));
                }
            }
        }
        tables.remove("sqlite_sequence");
        if (appId == 0 && tables.isEmpty()) {
            return new Inspection(Kind.EMPTY, 0);
        }
        if (appId == APPLICATION_ID) {
            int version = readVersion(c, path);
            if (version > CURRENT_VERSION) {
                throw new JournalRefusedException(path + ": journal schema version " + version
                        + " is newer than this hub supports (" + CURRENT_VERSION + "); refusing to open it."
                        + " Upgrade synapse-hub; the file was not modified.");
            }
            return new Inspection(Kind.CURRENT_OR_OLDER, version);
        }
        if (appId == 0 && tables.contains("events") && !tables.contains("meta")
                && hasColumns(c, "events", Set.of("seq", "ts", "kind", "payload"))
                && !hasColumns(c, "events", Set.of("durability"))) {
            return new Inspection(Kind.REFERENCE_V0, 0);
        }
        throw new JournalRefusedException(path + ": not a synapse-hub journal (SQLite application_id 0x"
                + Integer.toHexString(appId) + ", tables " + tables + "); refusing to open it."
                + " The file was not modified; pass another --db path.");
    }

    private static int readVersion(Connection c, String path) throws SQLException, JournalRefusedException {
        try (Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT key, value FROM meta WHERE key IN ('magic', 'schema_version')")) {
            String magic = null;
            String version = null;
            while (rs.next()) {
                if ("magic".equals(rs.getString(1))) {
                    magic = rs.getString(2);
                } else {
                    version = rs.getString(2);
                }
            }
            if (!MAGIC.equals(magic) || version == null) {
                throw new JournalRefusedException(path + ": journal meta table lacks its magic or schema_version;"
                        + " refusing to open a damaged or foreign file. The file was not modified.");
            }
            try {
                return Integer.parseInt(version);
            } catch (NumberFormatException e) {
                throw new JournalRefusedException(path + ": unreadable schema_version '" + version + "'");
            }
        } catch (SQLException e) {
            throw new JournalRefusedException(path + ": cannot read the journal meta table (" + e.getMessage()
                    + "); refusing to open it. The file was not modified.", e);
        }
    }

    private static boolean hasColumns(Connection c, String table, Set<String> columns) throws SQLException {
        Set<String> found = new HashSet<>();
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("PRAGMA table_info(" + table + ")")) {
            while (rs.next()) {
                found.add(rs.getString("name"));
            }
        }
        return found.containsAll(columns);
    }

    /** Creates the current schema in an empty database (version 1, then every step), in one transaction. */
    static void create(Connection c) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute("BEGIN IMMEDIATE");
            try {
                for (String sql : CREATE_V1) {
                    s.execute(sql);
                }
                for (Migration step : MIGRATIONS.subList(1, MIGRATIONS.size())) {
                    for (String sql : step.statements()) {
                        s.execute(sql);
                    }
                }
                stamp(s, CURRENT_VERSION);
                s.execute("COMMIT");
            } catch (SQLException e) {
                s.execute("ROLLBACK");
                throw e;
            }
        }
    }

    /** Migrates from {@code version} to the current one, all steps in one transaction. */
    static void migrate(Connection c, int version, System.Logger log) throws SQLException {
        if (version >= CURRENT_VERSION) {
            return;
        }
        try (Statement s = c.createStatement()) {
            s.execute("BEGIN IMMEDIATE");
            try {
                for (int v = version; v < CURRENT_VERSION; v++) {
                    Migration step = MIGRATIONS.get(v);
                    log.log(System.Logger.Level.INFO, "journal migration " + step.from() + " -> " + (step.from() + 1)
                            + ": " + step.description());
                    for (String sql : step.statements()) {
                        s.execute(sql);
                    }
                }
                stamp(s, CURRENT_VERSION);
                s.execute("COMMIT");
            } catch (SQLException e) {
                s.execute("ROLLBACK");
                throw e;
            }
        }
    }

    private static void stamp(Statement s, int version) throws SQLException {
        s.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', '" + version + "')");
        s.execute("PRAGMA application_id = " + APPLICATION_ID);
        s.execute("PRAGMA user_version = " + version);
    }
}
