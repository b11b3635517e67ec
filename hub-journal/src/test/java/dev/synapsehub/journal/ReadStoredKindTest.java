package dev.synapsehub.journal;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link SqliteJournal#readStored} and a replay's {@link ReplayRows} read each row's kind as
 * {@code getString} of the column would, although they read the column's bytes and keep one
 * {@code String} per distinct kind: unusual kinds (non-ASCII, ill-formed UTF-8, a NUL inside,
 * stored as a blob or a number, empty) and more distinct kinds than they keep, in an order that
 * makes them replace them.
 */
class ReadStoredKindTest {
    @TempDir
    Path dir;

    @Test
    void everyKindReadsAsTheTextColumnDoes() throws Exception {
        Path db = dir.resolve("j.db");
        SqliteJournal.open(db).close(); // the schema
        List<byte[]> kinds = new ArrayList<>();
        for (String k : List.of("claim", "release", "task_update", "chat", "caf\u00e9", "\u4e2d\u6587", "", "claim ")) {
            kinds.add(k.getBytes(StandardCharsets.UTF_8));
        }
        kinds.add(new byte[] {'c', 'l', 'a', 'i', (byte) 0xc0, (byte) 0xaf});
        kinds.add(new byte[] {'c', 'l', 'a', 'i', (byte) 0xc0, (byte) 0xb0}); // same length, ill-formed too, another byte
        kinds.add(new byte[] {'a', 0, 'b'});
        kinds.add(new byte[] {(byte) 0xff});
        for (int i = 0; i < 30; i++) {
            kinds.add(("kind-" + i).getBytes(StandardCharsets.US_ASCII)); // more distinct kinds than are kept
        }
        Random random = new Random(7);
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db);
             PreparedStatement text = c.prepareStatement(
                     "INSERT INTO events(ts, kind, durability, payload) VALUES (1.0, CAST(? AS TEXT), 'FULL', '{}')");
             PreparedStatement blob = c.prepareStatement(
                     "INSERT INTO events(ts, kind, durability, payload) VALUES (1.0, ?, 'FULL', '{}')");
             PreparedStatement number = c.prepareStatement(
                     "INSERT INTO events(ts, kind, durability, payload) VALUES (1.0, ?, 'FULL', '{}')")) {
            c.setAutoCommit(false);
            for (int row = 0; row < 3000; row++) {
                int pick = random.nextInt(row < 1500 ? 12 : kinds.size()); // the few first, then all of them
                switch (random.nextInt(10)) {
                    case 0 -> {
                        blob.setBytes(1, kinds.get(pick));
                        blob.executeUpdate();
                    }
                    case 1 -> {
                        number.setDouble(1, pick % 2 == 0 ? pick : pick + 0.5); // stored as text (column affinity)
                        number.executeUpdate();
                    }
                    default -> {
                        text.setBytes(1, kinds.get(pick));
                        text.executeUpdate();
                    }
                }
            }
            c.commit();
        }
        List<String> expected = new ArrayList<>();
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db);
             ResultSet rs = c.createStatement().executeQuery("SELECT kind FROM events ORDER BY seq")) {
            while (rs.next()) {
                expected.add(rs.getString(1));
            }
        }
        assertThat(expected).hasSize(3000).contains("claim", "caf\u00e9", "a\u0000b", "clai\uFFFD\uFFFD", "1.5", "0.0");
        try (SqliteJournal journal = SqliteJournal.open(db)) {
            List<String> read = new ArrayList<>();
            long after = 0;
            while (true) {
                List<StoredEvent> page = journal.readStored(after, 97, Long.MAX_VALUE);
                if (page.isEmpty()) {
                    break;
                }
                page.forEach(e -> read.add(e.kind()));
                after = page.get(page.size() - 1).seq();
            }
            assertThat(read).isEqualTo(expected);
        }
        // and a replay's batches (ReplayRows, a batch smaller than the rows: several reads on one)
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db);
             ResultSet rs = c.createStatement().executeQuery("SELECT seq, ts, kind, payload FROM events ORDER BY seq")) {
            ReplayRows rows = new ReplayRows(101);
            List<String> replayed = new ArrayList<>();
            do {
                rows.read(rs);
                for (int i = 0; i < rows.size; i++) {
                    replayed.add(rows.kind[i]);
                }
            } while (!rows.last);
            assertThat(replayed).isEqualTo(expected);
        }
    }
}
