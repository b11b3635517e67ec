package dev.synapsehub.journal;

import dev.synapsehub.core.event.ChatEvent;
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
 * The mailbox replay scan's index (schema version 3): the chat-only range query is planned
 * over the partial index of chat rows, reads exactly the chat rows after a seq, and a version-2
 * file gains the index when it is opened.
 */
class ChatIndexTest {
    @TempDir
    Path dir;

    private static String plan(Connection c, String sql) throws Exception {
        StringBuilder out = new StringBuilder();
        try (PreparedStatement q = c.prepareStatement("EXPLAIN QUERY PLAN " + sql)) {
            q.setLong(1, 5);
            q.setString(2, "chat");
            q.setInt(3, 1000);
            try (ResultSet rs = q.executeQuery()) {
                while (rs.next()) {
                    out.append(rs.getString("detail")).append('\n');
                }
            }
        }
        return out.toString();
    }

    private static boolean indexExists(Connection c) throws Exception {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(
                "SELECT name FROM sqlite_master WHERE type = 'index' AND name = '" + JournalSchema.CHAT_INDEX + "'")) {
            return rs.next();
        }
    }

    @Test
    void theChatScanUsesThePartialIndexAndReadsOnlyChatsAfterTheSeq() throws Exception {
        Path db = dir.resolve("hub.db");
        try (SqliteJournal j = SqliteJournal.open(db)) {
            List<CoordinationEvent> batch = new ArrayList<>();
            for (int i = 1; i <= 30; i++) {
                batch.add(i % 3 == 0 ? new ChatEvent(i, i, "ann", "bob", null, false, List.of("bob"), "{\"type\":\"chat\",\"sender\":\"ann\",\"target\":\"bob\",\"msg_id\":" + i + "}")
                        : new DeadLetterClearedEvent(i, "x" + i));
            }
            j.append(batch);
            List<JournaledEvent> chats = j.readAfter(10, 3, Set.of("chat"));
            assertThat(chats).extracting(JournaledEvent::seq).containsExactly(12L, 15L, 18L);
            assertThat(chats).allMatch(e -> e.event() instanceof ChatEvent);
        }
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db)) {
            assertThat(indexExists(c)).isTrue();
            assertThat(plan(c, EventRangeQuery.sql(List.of("chat")))).contains(JournalSchema.CHAT_INDEX);
        }
    }

    @Test
    void aVersionTwoFileGainsTheIndexWhenOpened() throws Exception {
        Path db = dir.resolve("v2.db");
        SqliteJournal.open(db).close();
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db); Statement s = c.createStatement()) {
            s.execute("DROP INDEX " + JournalSchema.CHAT_INDEX);
            s.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'");
            s.execute("PRAGMA user_version = 2");
        }
        SqliteJournal.open(db).close();
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db); Statement s = c.createStatement()) {
            assertThat(indexExists(c)).isTrue();
            try (ResultSet rs = s.executeQuery("SELECT value FROM meta WHERE key = 'schema_version'")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getString(1)).isEqualTo(Integer.toString(JournalSchema.CURRENT_VERSION));
            }
        }
    }
}
