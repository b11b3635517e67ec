package dev.synapsehub.journal;

import dev.synapsehub.core.board.NoteKind;
import dev.synapsehub.core.board.ProgressNote;
import dev.synapsehub.core.event.ChatEvent;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.event.DeliveryReceiptRequestedEvent;
import dev.synapsehub.core.event.Durability;
import dev.synapsehub.core.event.LedgerProgressEvent;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * INV-JA-4 with the core's own events: a chat-only or progress-only batch commits at
 * {@code synchronous=NORMAL}, and a batch that also holds a FULL event (a receipt request)
 * commits FULL; the stored durability column follows each event.
 */
class MessagingDurabilityTest {
    private static final double TS = 1_795_976_357.5;

    @TempDir
    Path dir;

    @Test
    void chatAndProgressCommitNormalUnlessTheBatchHoldsAFullEvent() throws Exception {
        Path db = dir.resolve("hub.db");
        ChatEvent chat = new ChatEvent(TS, 1, "p/alpha", "all", null, false, List.of(),
                "{\"sender\":\"p/alpha\",\"target\":\"all\",\"type\":\"chat\",\"msg_id\":1}");
        LedgerProgressEvent progress = new LedgerProgressEvent(TS,
                new ProgressNote("T-1", "p/alpha", NoteKind.NOTE, "started", TS));
        ChatEvent directed = new ChatEvent(TS, 2, "p/alpha", "p/beta", null, true, List.of("p/beta"),
                "{\"sender\":\"p/alpha\",\"target\":\"p/beta\",\"type\":\"chat\",\"msg_id\":2}");
        try (SqliteJournal j = SqliteJournal.open(db)) {
            j.append(List.of(chat));
            assertThat(j.synchronousOfLastCommit()).isEqualTo(Durability.NORMAL);
            j.append(List.of(progress));
            assertThat(j.synchronousOfLastCommit()).isEqualTo(Durability.NORMAL);
            j.append(List.of(directed, new DeliveryReceiptRequestedEvent(TS, "p/alpha", "p/beta", 2, 3, null)));
            assertThat(j.synchronousOfLastCommit()).isEqualTo(Durability.FULL);
        }
        List<String> rows = new ArrayList<>();
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db);
             Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT kind, durability FROM events ORDER BY seq")) {
            while (rs.next()) {
                rows.add(rs.getString(1) + ":" + rs.getString(2));
            }
        }
        assertThat(rows).containsExactly("chat:NORMAL", "ledger_progress:NORMAL", "chat:NORMAL",
                "delivery_receipt_requested:FULL");
        try (SqliteJournal j = SqliteJournal.open(db)) {
            List<CoordinationEvent> back = new ArrayList<>();
            j.replay(e -> back.add(e.event()));
            assertThat(back).hasSize(4);
            assertThat(back.get(0)).isEqualTo(chat);
            assertThat(back.get(1)).isEqualTo(progress);
        }
    }
}
