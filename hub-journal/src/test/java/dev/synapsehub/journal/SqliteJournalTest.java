package dev.synapsehub.journal;

import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.claim.ClaimStatus;
import dev.synapsehub.core.event.ClaimDeniedEvent;
import dev.synapsehub.core.event.ClaimReleasedEvent;
import dev.synapsehub.core.event.ClaimSnapshotEvent;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.event.Durability;
import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.core.state.CoordinationState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The SQLite journal itself: INV-JA-4, schema identification, migration, corrupt rows. */
class SqliteJournalTest {
    @TempDir
    Path dir;

    static ClaimSnapshotEvent claimEvent(String task, String owner, long epoch, double ts) {
        return new ClaimSnapshotEvent(ts, ClaimSnapshotEvent.Kind.CLAIM, new Claim(task, owner, owner, "", ts,
                ts + 3600, ClaimStatus.CLAIMED, "", "", List.of(), epoch, 0, "", null));
    }

    /** A NORMAL-durability row, as chat and progress will be (the core has no such event yet). */
    static SqliteJournal.Row chat(double ts) {
        return new SqliteJournal.Row(ts, "chat", Durability.NORMAL, "{\"type\":\"chat\"}");
    }

    private static List<JournaledEvent> all(SqliteJournal j) throws Exception {
        List<JournaledEvent> out = new ArrayList<>();
        j.replay(out::add);
        return out;
    }

    @Test
    void invJa4_walModeAndFullOrNormalPerBatch() throws Exception {
        try (SqliteJournal j = SqliteJournal.open(dir.resolve("hub.db"))) {
            assertThat(j.journalMode()).isEqualToIgnoringCase("wal");
            j.append(List.of(claimEvent("t1", "a", 1, 10)));
            assertThat(j.synchronousOfLastCommit()).isEqualTo(Durability.FULL);
            j.appendRows(List.of(chat(11)));
            assertThat(j.synchronousOfLastCommit()).isEqualTo(Durability.NORMAL);
            j.appendRows(List.of(chat(12), new SqliteJournal.Row(12, "claim", Durability.FULL,
                    new EventCodec().encode(claimEvent("t2", "a", 2, 12))), chat(12)));
            assertThat(j.synchronousOfLastCommit()).as("any FULL event makes the batch FULL").isEqualTo(Durability.FULL);
        }
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve("hub.db"));
             Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT durability, COUNT(*) FROM events GROUP BY durability ORDER BY 1")) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getString(1)).isEqualTo("FULL");
            assertThat(rs.getInt(2)).isEqualTo(2);
            assertThat(rs.next()).isTrue();
            assertThat(rs.getString(1)).isEqualTo("NORMAL");
            assertThat(rs.getInt(2)).isEqualTo(3);
        }
    }

    @Test
    void aCopyOfEventsDurableElsewhereCommitsAtNormalAndKeepsTheEventsOwnDurability() throws Exception {
        try (SqliteJournal j = SqliteJournal.open(dir.resolve("copy.db"))) {
            List<JournaledEvent> stored = j.appendCopy(List.of(claimEvent("t1", "a", 1, 10)));
            assertThat(j.synchronousOfLastCommit()).isEqualTo(Durability.NORMAL);
            assertThat(stored).extracting(JournaledEvent::seq).containsExactly(1L);
            j.append(List.of(claimEvent("t2", "a", 2, 11)));
            assertThat(j.synchronousOfLastCommit()).as("a plain append is FULL again").isEqualTo(Durability.FULL);
            assertThat(all(j)).hasSize(2);
        }
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve("copy.db"));
             Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT durability FROM events WHERE seq = 1")) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getString(1)).as("the row still says what it is").isEqualTo("FULL");
        }
    }

    @Test
    void seqsAreMonotonicAcrossReopenAndEventsRoundTrip() throws Exception {
        Path db = dir.resolve("hub.db");
        List<CoordinationEvent> written = List.of(claimEvent("t1", "a", 1, 10), new ClaimReleasedEvent(11, "t1"));
        try (SqliteJournal j = SqliteJournal.open(db)) {
            assertThat(j.append(written)).extracting(JournaledEvent::seq).containsExactly(1L, 2L);
        }
        try (SqliteJournal j = SqliteJournal.open(db)) {
            assertThat(j.lastSeq()).isEqualTo(2);
            assertThat(j.append(List.of(claimEvent("t2", "b", 2, 12)))).extracting(JournaledEvent::seq).containsExactly(3L);
            assertThat(all(j)).extracting(JournaledEvent::event)
                    .containsExactly(written.get(0), written.get(1), claimEvent("t2", "b", 2, 12));
        }
    }

    @Test
    void batchesAcrossMultiRowInsertChunksAreNumberedInOrderAndStoredAsText() throws Exception {
        Path db = dir.resolve("hub.db");
        List<CoordinationEvent> written = new ArrayList<>();
        try (SqliteJournal j = SqliteJournal.open(db)) {
            long expected = 1;
            for (int size : new int[] {1, SqliteJournal.CHUNK - 1, SqliteJournal.CHUNK, SqliteJournal.CHUNK + 1,
                    3 * SqliteJournal.CHUNK + 5}) {
                List<CoordinationEvent> batch = new ArrayList<>();
                for (int i = 0; i < size; i++) {
                    batch.add(claimEvent("t" + written.size(), "a", written.size() + 1, written.size()));
                    written.add(batch.get(i));
                }
                List<JournaledEvent> committed = j.append(batch);
                for (JournaledEvent e : committed) {
                    assertThat(e.seq()).isEqualTo(expected++);
                }
            }
        }
        try (SqliteJournal j = SqliteJournal.open(db)) {
            List<JournaledEvent> replayed = all(j);
            assertThat(replayed).extracting(JournaledEvent::event).containsExactlyElementsOf(written);
            assertThat(replayed).extracting(JournaledEvent::seq).isSorted();
        }
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db);
             Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT DISTINCT typeof(payload) FROM events")) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getString(1)).isEqualTo("text");
            assertThat(rs.next()).isFalse();
        }
    }

    @Test
    void aNonSqliteFileIsRefusedAndLeftUntouched() throws Exception {
        Path db = dir.resolve("notes.db");
        byte[] content = "these are my notes, not a database\n".repeat(200).getBytes(StandardCharsets.UTF_8);
        Files.write(db, content);
        assertThatThrownBy(() -> SqliteJournal.open(db)).isInstanceOf(JournalRefusedException.class)
                .hasMessageContaining("not an SQLite database");
        assertThat(Files.readAllBytes(db)).isEqualTo(content);
        assertThat(Files.exists(dir.resolve("notes.db-wal"))).isFalse();
    }

    @Test
    void aCorruptSqliteFileIsRefusedAndLeftUntouched() throws Exception {
        Path db = dir.resolve("hub.db");
        try (SqliteJournal j = SqliteJournal.open(db)) {
            j.append(List.of(claimEvent("t1", "a", 1, 10)));
        }
        byte[] bytes = Files.readAllBytes(db);
        for (int i = 100; i < bytes.length; i++) {
            bytes[i] = (byte) 0xA5; // keep the header, destroy every page
        }
        Files.write(db, bytes);
        assertThatThrownBy(() -> SqliteJournal.open(db)).isInstanceOf(JournalRefusedException.class)
                .hasMessageContaining("refusing to open it");
        assertThat(Files.readAllBytes(db)).isEqualTo(bytes);
    }

    @Test
    void aForeignSqliteFileIsRefusedAndLeftUntouched() throws Exception {
        Path db = dir.resolve("other.db");
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE customers(id INTEGER PRIMARY KEY, name TEXT)");
            s.execute("INSERT INTO customers(name) VALUES ('ada')");
        }
        byte[] before = Files.readAllBytes(db);
        assertThatThrownBy(() -> SqliteJournal.open(db)).isInstanceOf(JournalRefusedException.class)
                .hasMessageContaining("not a synapse-hub journal");
        assertThat(Files.readAllBytes(db)).isEqualTo(before);

        Path app = dir.resolve("app.db");
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + app); Statement s = c.createStatement()) {
            s.execute("PRAGMA application_id = 1234");
            s.execute("CREATE TABLE events(seq INTEGER PRIMARY KEY, ts REAL, kind TEXT, payload TEXT)");
        }
        byte[] appBefore = Files.readAllBytes(app);
        assertThatThrownBy(() -> SqliteJournal.open(app)).isInstanceOf(JournalRefusedException.class);
        assertThat(Files.readAllBytes(app)).isEqualTo(appBefore);
    }

    @Test
    void aNewerSchemaVersionIsRefusedNotDowngraded() throws Exception {
        Path db = dir.resolve("hub.db");
        SqliteJournal.open(db).close();
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db); Statement s = c.createStatement()) {
            s.execute("UPDATE meta SET value = '" + (JournalSchema.CURRENT_VERSION + 1) + "' WHERE key = 'schema_version'");
        }
        byte[] before = Files.readAllBytes(db);
        assertThatThrownBy(() -> SqliteJournal.open(db)).isInstanceOf(JournalRefusedException.class)
                .hasMessageContaining("newer than this hub supports");
        assertThat(Files.readAllBytes(db)).isEqualTo(before);
    }

    @Test
    void aVersionZeroReferenceLogMigratesAndReplays() throws Exception {
        Path db = dir.resolve("reference.db");
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE events(seq INTEGER PRIMARY KEY AUTOINCREMENT, ts REAL NOT NULL, kind TEXT NOT NULL,"
                    + " payload TEXT NOT NULL)");
            s.execute("INSERT INTO events(ts, kind, payload) VALUES (100.0, 'claim', '{\"task_id\":\"t\",\"owner\":\"bob\","
                    + "\"note\":\"\",\"claimed_at\":100.0,\"lease_expires_at\":4000000000.0,\"status\":\"claimed\","
                    + "\"data_ref\":\"\",\"worktree\":\"\",\"paths\":[],\"epoch\":5,\"version\":0,\"checkpoint\":\"\","
                    + "\"git\":null}')");
            s.execute("INSERT INTO events(ts, kind, payload) VALUES (101.0, 'sandbox_run', '{\"type\":\"sandbox_run\"}')"); // unknown kind (recall is known since issue 14)
        }
        try (SqliteJournal j = SqliteJournal.open(db)) {
            CoordinationState state = new CoordinationState();
            state.replay(j, 200.0, n -> { });
            assertThat(state.claims().liveClaim("t", 200.0)).get().extracting(Claim::owner, Claim::principal, Claim::epoch)
                    .containsExactly("bob", "bob", 5L);
            assertThat(j.lastReplay().skippedUnknown()).isEqualTo(1);
            assertThat(j.append(List.of(claimEvent("u", "a", 6, 201)))).extracting(JournaledEvent::seq).containsExactly(3L);
        }
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db); Statement s = c.createStatement()) {
            try (ResultSet rs = s.executeQuery("SELECT value FROM meta WHERE key = 'schema_version'")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getString(1)).isEqualTo(Integer.toString(JournalSchema.CURRENT_VERSION));
            }
            try (ResultSet rs = s.executeQuery("PRAGMA application_id")) {
                rs.next();
                assertThat(rs.getInt(1)).isEqualTo(JournalSchema.APPLICATION_ID);
            }
        }
        assertThat(JournalSchema.MIGRATIONS).extracting(JournalSchema.Migration::from)
                .as("one step per version below the current one").containsExactly(0, 1, 2, 3);
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM snapshots")) {
            assertThat(rs.next()).as("the v2 step created the snapshot table").isTrue();
        }
    }

    @Test
    void corruptRowsAreCountedAndReportedAndUnknownKindsSkipped() throws Exception {
        Path db = dir.resolve("hub.db");
        try (SqliteJournal j = SqliteJournal.open(db)) {
            j.append(List.of(claimEvent("t1", "a", 1, 10)));
        }
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db); Statement s = c.createStatement()) {
            s.execute("INSERT INTO events(ts, kind, durability, payload) VALUES (11, 'claim', 'FULL', '{not json')");
            s.execute("INSERT INTO events(ts, kind, durability, payload) VALUES (12, 'sandbox_run', 'FULL', '{}')"); // unknown kind (recall is known since issue 14)
        }
        try (SqliteJournal j = SqliteJournal.open(db)) {
            j.append(List.of(claimEvent("t2", "a", 2, 13)));
            List<JournaledEvent> seen = all(j);
            assertThat(seen).extracting(JournaledEvent::seq).containsExactly(1L, 4L);
            ReplayStats stats = j.lastReplay();
            assertThat(stats.rows()).isEqualTo(4);
            assertThat(stats.corrupt()).isEqualTo(1);
            assertThat(stats.firstCorruptSeq()).isEqualTo(2);
            assertThat(stats.skippedUnknown()).isEqualTo(1);
            assertThat(stats.clean()).isFalse();
        }
    }

    @Test
    void replayProgressLineShowsCountRateAndTimeLeft() {
        ReplayProgress p = new ReplayProgress(System.getLogger("test"), 1_000_000, 0);
        String line = p.line(250_000, System.nanoTime() + 500_000_000L);
        assertThat(line).contains("250,000 of 1,000,000 events (25%)").contains("events/s").contains("s left");
    }

    @Test
    void aSecondWriterIsRefusedWhileTheJournalIsOpenAndAdmittedAfterItCloses() throws Exception {
        Path db = dir.resolve("hub.db");
        try (SqliteJournal first = SqliteJournal.open(db)) {
            first.append(List.of(claimEvent("t1", "a", 1, 10)));
            assertThatThrownBy(() -> SqliteJournal.open(db)).isInstanceOf(JournalRefusedException.class)
                    .hasMessageContaining("open in another hub");
        }
        try (SqliteJournal again = SqliteJournal.open(db)) {
            assertThat(again.lastSeq()).isEqualTo(1);
        }
    }

    @Test
    void aReaderOnAnotherConnectionSeesEveryCommittedRowWhileTheWriterAppends() throws Exception {
        try (SqliteJournal writer = SqliteJournal.open(dir.resolve("hub.db"));
             dev.synapsehub.core.journal.JournalReader reader = writer.openReader()) {
            writer.append(List.of(claimEvent("t1", "a", 1, 10)));
            assertThat(reader.readAfter(0, 10, java.util.Set.of("claim"))).extracting(JournaledEvent::seq)
                    .containsExactly(1L);
            writer.append(List.of(claimEvent("t2", "a", 2, 11), claimEvent("t3", "a", 3, 12)));
            assertThat(reader.readAfter(1, 10, java.util.Set.of("claim"))).extracting(JournaledEvent::seq)
                    .containsExactly(2L, 3L);
            assertThat(reader.readAfter(0, 2, java.util.Set.of("claim"))).hasSize(2);
        }
    }
}
