package dev.synapsehub.journal;

import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.claim.ClaimStatus;
import dev.synapsehub.core.event.ClaimReleasedEvent;
import dev.synapsehub.core.event.ClaimSnapshotEvent;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link SqliteJournal#readStored} hands out each payload as the bytes SQLite holds (what a
 * peer's log pull copies to its frame), hostile rows included, and bounds a page by those bytes.
 */
class ReadStoredBytesTest {
    @TempDir
    Path dir;

    @Test
    void payloadsComeOutAsStoredAndPagesAreBoundedByBytes() throws Exception {
        Path db = dir.resolve("j.db");
        EventCodec codec = new EventCodec();
        ClaimSnapshotEvent claim = new ClaimSnapshotEvent(10.0, ClaimSnapshotEvent.Kind.CLAIM, new Claim("t\u00e9", "o", "o",
                "", 10.0, 20.0, ClaimStatus.CLAIMED, "", "wt", List.of("src"), 1, 0, "", null));
        try (SqliteJournal journal = SqliteJournal.open(db)) {
            journal.append(List.of(claim, new ClaimReleasedEvent(11.0, "t\u00e9")));
        }
        byte[] illFormed = {'{', '"', 'a', '"', ':', '"', (byte) 0xc0, (byte) 0xaf, '"', '}'};
        byte[] raw = "{\"a\":\"caf\u00e9\"}".getBytes(StandardCharsets.UTF_8);
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db);
             PreparedStatement text = c.prepareStatement(
                     "INSERT INTO events(ts, kind, durability, payload) VALUES (12.0, 'claim', 'FULL', CAST(? AS TEXT))");
             PreparedStatement blob = c.prepareStatement(
                     "INSERT INTO events(ts, kind, durability, payload) VALUES (13.0, 'claim', 'FULL', ?)");
             PreparedStatement number = c.prepareStatement(
                     "INSERT INTO events(ts, kind, durability, payload) VALUES (14.0, 'claim', 'FULL', 42)")) {
            text.setBytes(1, illFormed);
            text.executeUpdate();
            text.setBytes(1, raw);
            text.executeUpdate();
            blob.setBytes(1, raw);
            blob.executeUpdate();
            number.executeUpdate();
        }
        try (SqliteJournal journal = SqliteJournal.open(db)) {
            List<StoredEvent> all = journal.readStored(0, 100, Long.MAX_VALUE);
            assertThat(all).extracting(StoredEvent::seq).containsExactly(1L, 2L, 3L, 4L, 5L, 6L);
            assertThat(all.get(0).payloadUtf8()).isEqualTo(codec.encode(claim).getBytes(StandardCharsets.US_ASCII));
            assertThat(all.get(0).payload()).isEqualTo(codec.encode(claim));
            assertThat(all.get(1).payload()).isEqualTo("{\"task_id\":\"t\\u00E9\"}");
            assertThat(all.get(2).payloadUtf8()).isEqualTo(illFormed);
            assertThat(all.get(2).payload()).isEqualTo(new String(illFormed, StandardCharsets.UTF_8)).contains("\uFFFD");
            assertThat(all.get(3).payloadUtf8()).isEqualTo(raw);
            assertThat(all.get(4).payloadUtf8()).isEqualTo(raw);
            assertThat(all.get(5).payload()).isEqualTo("42");

            // the byte budget: the first row always comes, then rows while their bytes fit
            int first = all.get(0).payloadUtf8().length;
            int second = all.get(1).payloadUtf8().length;
            assertThat(journal.readStored(0, 100, 1)).hasSize(1);
            assertThat(journal.readStored(0, 100, first + second)).hasSize(2);
            assertThat(journal.readStored(0, 100, first + second + illFormed.length - 1)).hasSize(2);
            assertThat(journal.readStored(2, 2, Long.MAX_VALUE)).extracting(StoredEvent::seq).containsExactly(3L, 4L);

            // a reader of its own (serving peers off the writer) reads the same rows the same way
            try (SqliteJournalReader reader = journal.openReader()) {
                assertSame(reader.readStored(0, 100, Long.MAX_VALUE), all);
                assertThat(reader.readStored(0, 100, first + second)).hasSize(2);
                assertThat(reader.readStored(0, 100, first + second + illFormed.length - 1)).hasSize(2);
                assertThat(reader.readStored(2, 2, Long.MAX_VALUE)).extracting(StoredEvent::seq).containsExactly(3L, 4L);
                assertThat(reader.readStored(6, 100, Long.MAX_VALUE)).isEmpty();

                // it sees what the writer committed since, and only that
                journal.append(List.of(new ClaimReleasedEvent(15.0, "later")));
                assertSame(reader.readStored(5, 100, Long.MAX_VALUE), journal.readStored(5, 100, Long.MAX_VALUE));
                assertThat(reader.readStored(5, 100, Long.MAX_VALUE)).extracting(StoredEvent::seq).containsExactly(6L, 7L);
            }
        }
    }

    private static void assertSame(List<StoredEvent> read, List<StoredEvent> expected) {
        assertThat(read).hasSameSizeAs(expected);
        for (int i = 0; i < expected.size(); i++) {
            StoredEvent r = read.get(i);
            StoredEvent e = expected.get(i);
            assertThat(List.of(r.seq(), r.ts(), String.valueOf(r.kind()))).isEqualTo(List.of(e.seq(), e.ts(), String.valueOf(e.kind())));
            assertThat(r.payloadUtf8()).isEqualTo(e.payloadUtf8());
        }
    }
}
