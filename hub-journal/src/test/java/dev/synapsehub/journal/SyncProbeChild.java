package dev.synapsehub.journal;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.Statement;

/**
 * A bare SQLite writer in WAL mode at a given {@code synchronous} level, run by
 * {@link PowerLossTest} to show the power-loss rig can tell a syncing writer from one that
 * does not: it commits one row per transaction and prints {@code ACK n $} after each commit.
 *
 * <p>Arguments: db path, synchronous level (OFF, NORMAL or FULL).
 */
public final class SyncProbeChild {
    private SyncProbeChild() {
    }

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + args[0])) {
            try (Statement s = c.createStatement()) {
                s.execute("PRAGMA journal_mode=WAL");
                s.execute("PRAGMA synchronous=" + args[1]);
                s.execute("CREATE TABLE IF NOT EXISTS acked (n INTEGER PRIMARY KEY)");
            }
            c.setAutoCommit(false);
            out.print("READY $\n");
            out.flush();
            try (PreparedStatement insert = c.prepareStatement("INSERT INTO acked (n) VALUES (?)")) {
                for (long n = 1; ; n++) {
                    insert.setLong(1, n);
                    insert.executeUpdate();
                    c.commit();
                    out.print("ACK " + n + " $\n");
                    out.flush();
                }
            }
        }
    }
}
