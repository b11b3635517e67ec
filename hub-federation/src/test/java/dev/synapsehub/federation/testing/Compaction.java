package dev.synapsehub.federation.testing;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;

/** Leaves a running hub's journal as retention does (Retention.compact): a prefix deleted, compacted_through set. */
public final class Compaction {
    private Compaction() {
    }

    /** Deletes the rows of the journal at {@code db} up to {@code seq} and records it. */
    public static void through(Path db, long seq) throws SQLException {
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db);
             Statement st = c.createStatement()) {
            st.execute("PRAGMA busy_timeout = 5000");
            st.execute("DELETE FROM events WHERE seq <= " + seq);
            st.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('compacted_through', '" + seq + "')");
        }
    }
}
