package dev.synapsehub.journal;

import dev.synapsehub.core.journal.JournaledEvent;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import static dev.synapsehub.journal.SqliteJournalTest.claimEvent;
import static org.assertj.core.api.Assertions.assertThat;

/** {@link SqliteJournal#advanceTo}: a mesh node's local copy skipping what an installed snapshot covers. */
class JournalAdvanceTest {
    @TempDir
    Path dir;

    @Test
    void theNextAppendIsNumberedAfterTheSkippedSeqsAndTheGapIsRecordedAsCompacted() throws Exception {
        Path db = dir.resolve("node.db");
        try (SqliteJournal j = SqliteJournal.open(db)) {
            j.append(List.of(claimEvent("t1", "a", 1, 10), claimEvent("t2", "a", 2, 11)));
            j.advanceTo(40);
            assertThat(j.lastSeq()).isEqualTo(40);
            List<JournaledEvent> next = j.append(List.of(claimEvent("t3", "a", 3, 12)));
            assertThat(next.get(0).seq()).isEqualTo(41);
            j.advanceTo(7); // behind: nothing changes
            assertThat(j.lastSeq()).isEqualTo(41);
            assertThat(j.compactedThrough()).isEqualTo(40);
        }
        try (SqliteJournal j = SqliteJournal.open(db)) {
            assertThat(j.lastSeq()).as("the numbering survives a reopen").isEqualTo(41);
            assertThat(j.compactedThrough()).isEqualTo(40);
            List<Long> seqs = new ArrayList<>();
            j.replay(e -> seqs.add(e.seq()));
            assertThat(seqs).containsExactly(1L, 2L, 41L);
            assertThat(j.readAfter(2, 10, Set.of(claimEvent("x", "a", 1, 1).kind())).stream().map(JournaledEvent::seq).toList())
                    .containsExactly(41L);
            assertThat(j.append(List.of(claimEvent("t4", "a", 4, 13))).get(0).seq()).isEqualTo(42);
        }
    }
}
