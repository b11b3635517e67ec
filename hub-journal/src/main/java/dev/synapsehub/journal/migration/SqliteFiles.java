package dev.synapsehub.journal.migration;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Arrays;
import java.util.Set;
import java.util.TreeSet;

/** What an SQLite file says about itself, read without changing it. */
final class SqliteFiles {
    private static final byte[] SQLITE_HEADER = "SQLite format 3\0".getBytes(StandardCharsets.US_ASCII);

    private SqliteFiles() {
    }

    /** True when the file starts with SQLite's 16-byte header. */
    static boolean hasSqliteHeader(Path file) throws IOException {
        byte[] head = new byte[SQLITE_HEADER.length];
        int read;
        try (InputStream in = Files.newInputStream(file)) {
            read = in.readNBytes(head, 0, head.length);
        }
        return read == head.length && Arrays.equals(head, SQLITE_HEADER);
    }

    /** {@code PRAGMA application_id} (0 when unset). */
    static int applicationId(Connection c) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("PRAGMA application_id")) {
            return rs.next() ? rs.getInt(1) : 0;
        }
    }

    /** The tables, without SQLite's own {@code sqlite_sequence}. */
    static Set<String> tables(Connection c) throws SQLException {
        Set<String> tables = new TreeSet<>();
        try (Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT name FROM sqlite_master WHERE type = 'table'")) {
            while (rs.next()) {
                tables.add(rs.getString(1));
            }
        }
        tables.remove("sqlite_sequence");
        return tables;
    }
}
