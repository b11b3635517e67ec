package dev.synapsehub.core.board;

import dev.synapsehub.core.undo.UndoLog;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Progress notes are bounded by their texts' characters together too, the oldest dropped first. */
class ProgressLogBoundsTest {
    private static ProgressNote note(String author, String text) {
        return new ProgressNote("T1", author, NoteKind.NOTE, text, 1);
    }

    @Test
    void theOldestNotesGoWhenTheTextsTogetherPassTheBoundAndARollbackBringsThemBack() {
        UndoLog undo = new UndoLog();
        ProgressLog log = new ProgressLog(BoardLimits.DEFAULTS, 10, undo);
        log.append(note("a", "aaaa"));
        log.append(note("b", "bbbb"));
        assertThat(log.chars()).isEqualTo(8);

        undo.begin();
        log.append(note("c", "ccccccc")); // 7 more: a and b go
        assertThat(log.notes()).extracting(ProgressNote::author).containsExactly("c");
        assertThat(log.countByAuthor("a")).isZero();
        undo.rollback();
        assertThat(log.notes()).extracting(ProgressNote::author).containsExactly("a", "b");
        assertThat(log.chars()).isEqualTo(8);

        log.append(note("d", "a note longer than ten")); // alone over the bound: kept, alone
        assertThat(log.notes()).extracting(ProgressNote::author).containsExactly("d");
        assertThat(ProgressLog.MAX_CHARS).isEqualTo(64L * 1024 * 1024);
    }
}
