package dev.synapsehub.journal;

import dev.synapsehub.core.event.AuditRecordEvent;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.event.DeadLetterClearedEvent;
import dev.synapsehub.core.journal.JournaledEvent;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The start-up read of the partition audit rows (schema version 4): planned over their partial
 * index instead of a walk of the whole journal, reading exactly those rows; a version-3 file
 * gains the index when it is opened.
 */
class PartitionIndexTest {
    @TempDir
    Path dir;

    private static String plan(Connection c, String sql) throws Exception {
        StringBuilder out = new StringBuilder();
        try (PreparedStatement q = c.prepareStatement("EXPLAIN QUERY PLAN " + sql)) {
            q.setLong(1, 0);
            q.setString(2, "multihub_heal");
            q.setString(3, "multihub_partition");
            q.setInt(4, Integer.MAX_VALUE);
            try (ResultSet rs = q.executeQuery()) {
                while (rs.next()) {
                    out.append(rs.getString("detail")).append('\n');
                }
            }
        }
        return out.toString();
    }

    private static boolean indexExists(Connection c) throws Exception {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT name FROM sqlite_master"
                + " WHERE type = 'index' AND name = '" + JournalSchema.PARTITION_INDEX + "'")) {
            return rs.next();
        }
    }

    @Test
    void thePartitionReadUsesItsPartialIndexAndReadsOnlyThoseRows() throws Exception {
        Path db = dir.resolve("hub.db");
        try (SqliteJournal j = SqliteJournal.open(db)) {
            List<CoordinationEvent> batch = new ArrayList<>();
            for (int i = 1; i <= 40; i++) {
                batch.add(switch (i % 10) {
                    case 3 -> new AuditRecordEvent(i, "multihub_partition", "{\"peer\":\"p" + i + "\"}");
                    case 7 -> new AuditRecordEvent(i, "multihub_heal", "{\"peer\":\"p" + (i - 4) + "\"}");
                    case 9 -> new AuditRecordEvent(i, "multihub_equivocation", "{\"peer\":\"q\"}");
                    default -> new DeadLetterClearedEvent(i, "x" + i);
                });
            }
            j.append(batch);
            // the set the federation extension asks for at start-up
            List<JournaledEvent> rows = j.readAfter(0, Integer.MAX_VALUE, Set.of("multihub_partition", "multihub_heal"));
            assertThat(rows).extracting(JournaledEvent::seq).containsExactly(3L, 7L, 13L, 17L, 23L, 27L, 33L, 37L);
            assertThat(rows).allMatch(e -> e.event() instanceof AuditRecordEvent a
                    && Set.of("multihub_partition", "multihub_heal").contains(a.kind()));
            assertThat(j.readAfter(13, 2, Set.of("multihub_heal", "multihub_partition")))
                    .extracting(JournaledEvent::seq).containsExactly(17L, 23L);
        }
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db)) {
            assertThat(indexExists(c)).isTrue();
            assertThat(plan(c, EventRangeQuery.sql(JournalSchema.PARTITION_KINDS)))
                    .contains(JournalSchema.PARTITION_INDEX);
        }
    }

    @Test
    void aVersionThreeFileGainsTheIndexWhenOpened() throws Exception {
        Path db = dir.resolve("v3.db");
        try (SqliteJournal j = SqliteJournal.open(db)) {
            j.append(List.of(new AuditRecordEvent(1, "multihub_partition", "{\"peer\":\"p\"}")));
        }
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db); Statement s = c.createStatement()) {
            s.execute("DROP INDEX " + JournalSchema.PARTITION_INDEX);
            s.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'");
            s.execute("PRAGMA user_version = 3");
        }
        try (SqliteJournal j = SqliteJournal.open(db)) {
            assertThat(j.readAfter(0, 10, Set.of("multihub_partition", "multihub_heal"))).hasSize(1);
        }
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db); Statement s = c.createStatement()) {
            assertThat(indexExists(c)).isTrue();
            try (ResultSet rs = s.executeQuery("SELECT value FROM meta WHERE key = 'schema_version'")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getString(1)).isEqualTo("4");
            }
        }
    }
}
