package dev.synapsehub.journal.migration;

import dev.synapsehub.journal.JournalSchema;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Another v2 hub's database (wire contract §12.1, §12.2), read from a private copy of the file
 * and its WAL so the source is never opened for writing, not even by SQLite's recovery.
 * Opening identifies it: an SQLite file with an {@code events(seq, ts, kind, payload)} table,
 * not one of our journals, passing {@code PRAGMA quick_check}.
 */
final class SourceDatabase implements AutoCloseable {
    /** One stored event row as read; {@code kind}, {@code payload} may be null in a damaged file. */
    record Row(long seq, Double ts, String kind, String payload) {
    }

    /** One {@code operations} row: a keyed mutation committed atomically with its response (§4.6). */
    record Operation(String key, String requestDigest, String response, Double committedAt) {
    }

    /** Receives rows in seq order. */
    @FunctionalInterface
    interface RowSink {
        void accept(Row row) throws ImportRefusedException;
    }

    private final Path original;
    private final Connection connection;
    private final Set<String> tables;

    private SourceDatabase(Path original, Connection connection, Set<String> tables) {
        this.original = original;
        this.connection = connection;
        this.tables = tables;
    }

    /**
     * Copies {@code source} (and its {@code -wal}) into {@code workDir} and opens the copy.
     *
     * @throws ImportRefusedException when the file is missing, not SQLite, one of our own
     *     journals, not in the §12 layout, or damaged
     */
    static SourceDatabase open(Path source, Path workDir) throws ImportRefusedException {
        if (!Files.isRegularFile(source)) {
            throw refused(source + ": no such file");
        }
        checkHeader(source);
        Path copy = workDir.resolve("source.db");
        try {
            Files.copy(source, copy);
            Path wal = source.resolveSibling(source.getFileName() + "-wal");
            if (Files.isRegularFile(wal)) {
                Files.copy(wal, workDir.resolve("source.db-wal"));
            }
        } catch (IOException e) {
            throw refused(source + ": cannot copy it for reading: " + e.getMessage(), e);
        }
        Connection c;
        try {
            c = DriverManager.getConnection("jdbc:sqlite:" + copy);
        } catch (SQLException e) {
            throw refused(source + ": cannot open it as SQLite: " + e.getMessage(), e);
        }
        try {
            Set<String> tables = identify(source, c);
            quickCheck(source, c);
            return new SourceDatabase(source, c, tables);
        } catch (ImportRefusedException | RuntimeException e) {
            closeQuietly(c);
            throw e;
        }
    }

    private static void checkHeader(Path source) throws ImportRefusedException {
        boolean sqlite;
        try {
            sqlite = SqliteFiles.hasSqliteHeader(source);
        } catch (IOException e) {
            throw refused(source + ": cannot read it: " + e.getMessage(), e);
        }
        if (!sqlite) {
            throw refused(source + ": not an SQLite database (bad header; a database encrypted with --db-key-file "
                    + "must be decrypted with SQLCipher first); nothing was written");
        }
    }

    private static Set<String> identify(Path source, Connection c) throws ImportRefusedException {
        try (Statement s = c.createStatement()) {
            int appId = SqliteFiles.applicationId(c);
            Set<String> tables = SqliteFiles.tables(c);
            Set<String> eventColumns = new HashSet<>();
            if (tables.contains("events")) {
                try (ResultSet rs = s.executeQuery("PRAGMA table_info(events)")) {
                    while (rs.next()) {
                        eventColumns.add(rs.getString("name"));
                    }
                }
            }
            if (appId == JournalSchema.APPLICATION_ID || tables.contains("meta") || eventColumns.contains("durability")) {
                throw refused(source + ": this is already a synapse-hub journal, not another hub's database; "
                        + "run the hub on it directly (--db " + source + ") or copy the file. Nothing was written.");
            }
            if (!eventColumns.containsAll(List.of("seq", "ts", "kind", "payload"))) {
                throw refused(source + ": not a v2 hub database: no events(seq, ts, kind, payload) table (tables "
                        + tables + "); nothing was written");
            }
            return tables;
        } catch (SQLException e) {
            throw refused(source + ": not a readable SQLite database (" + e.getMessage() + "); nothing was written", e);
        }
    }

    private static void quickCheck(Path source, Connection c) throws ImportRefusedException {
        List<String> problems = new ArrayList<>();
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("PRAGMA quick_check(5)")) {
            while (rs.next()) {
                problems.add(rs.getString(1));
            }
        } catch (SQLException e) {
            throw refused(source + ": damaged database (" + e.getMessage() + "); nothing was written", e);
        }
        if (!problems.equals(List.of("ok"))) {
            throw refused(source + ": damaged database, SQLite quick_check reports " + problems
                    + "; nothing was written");
        }
    }

    /** The source file (not the copy). */
    Path path() {
        return original;
    }

    /** Its tables, without SQLite's own. */
    Set<String> tables() {
        return tables;
    }

    /** Number of rows in {@code table}, or -1 when it does not exist. */
    long count(String table, String where) throws ImportRefusedException {
        if (!tables.contains(table)) {
            return -1;
        }
        try (Statement s = connection.createStatement();
             ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM \"" + table + "\"" + (where == null ? "" : " WHERE " + where))) {
            return rs.next() ? rs.getLong(1) : 0;
        } catch (SQLException e) {
            throw refused(original + ": cannot read table " + table + ": " + e.getMessage(), e);
        }
    }

    /** Streams {@code events} in seq order. */
    void forEachEvent(RowSink sink) throws ImportRefusedException {
        try (PreparedStatement q = connection.prepareStatement("SELECT seq, ts, kind, payload FROM events ORDER BY seq");
             ResultSet rs = q.executeQuery()) {
            while (rs.next()) {
                long seq = rs.getLong(1);
                double ts = rs.getDouble(2);
                Double tsOrNull = rs.wasNull() ? null : ts;
                sink.accept(new Row(seq, tsOrNull, rs.getString(3), rs.getString(4)));
            }
        } catch (SQLException e) {
            throw refused(original + ": reading events failed: " + e.getMessage(), e);
        }
    }

    /** The {@code operations} table (§12.2), empty when the source has none. */
    List<Operation> operations() throws ImportRefusedException {
        List<Operation> out = new ArrayList<>();
        if (!tables.contains("operations")) {
            return out;
        }
        try (Statement s = connection.createStatement();
             ResultSet rs = s.executeQuery("SELECT operation_key, request_digest, response_json, committed_at"
                     + " FROM operations ORDER BY COALESCE(commit_seq, 0), operation_key")) {
            while (rs.next()) {
                double at = rs.getDouble(4);
                out.add(new Operation(rs.getString(1), rs.getString(2), rs.getString(3), rs.wasNull() ? null : at));
            }
        } catch (SQLException e) {
            throw refused(original + ": cannot read the operations table: " + e.getMessage(), e);
        }
        return out;
    }

    /** Sidecar files of the source that an import does not read (§12.1). */
    List<Path> sidecars() {
        List<Path> out = new ArrayList<>();
        for (String suffix : List.of(".checkpoint.db", ".message-auth.db")) {
            Path p = original.resolveSibling(original.getFileName() + suffix);
            if (Files.exists(p)) {
                out.add(p);
            }
        }
        return out;
    }

    private static ImportRefusedException refused(String message) {
        return new ImportRefusedException(ImportRefusedException.Side.SOURCE, message);
    }

    private static ImportRefusedException refused(String message, Throwable cause) {
        return new ImportRefusedException(ImportRefusedException.Side.SOURCE, message, cause);
    }

    private static void closeQuietly(Connection c) {
        try {
            c.close();
        } catch (SQLException ignored) {
            // already failing
        }
    }

    @Override
    public void close() {
        closeQuietly(connection);
    }
}
