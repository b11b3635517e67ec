package dev.synapsehub.core.messaging;

import dev.synapsehub.core.undo.UndoLog;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The history is bounded in characters as well as in count, and a rollback restores both. */
class ChatHistoryTest {
    private static ChatRecord chat(long id, int chars) {
        return new ChatRecord(id, id, "a", "all", null, id, "x".repeat(chars));
    }

    @Test
    void theOldestChatsGoWhenTheRetainedTextPassesItsBound() {
        ChatHistory h = new ChatHistory(10_000, 1_000, new UndoLog());
        for (int i = 1; i <= 5; i++) {
            h.append(chat(i, 300));
        }
        assertThat(h.all()).extracting(ChatRecord::msgId).containsExactly(3L, 4L, 5L);
        assertThat(h.chars()).isEqualTo(900);
        h.append(chat(6, 5_000)); // larger than the bound alone: kept, as the newest always is
        assertThat(h.all()).extracting(ChatRecord::msgId).containsExactly(6L);
    }

    @Test
    void aRolledBackAppendRestoresTheDroppedChatsAndTheCount() {
        UndoLog undo = new UndoLog();
        ChatHistory h = new ChatHistory(10_000, 1_000, undo);
        h.append(chat(1, 400));
        h.append(chat(2, 400));
        undo.begin();
        h.append(chat(3, 700));
        assertThat(h.all()).extracting(ChatRecord::msgId).containsExactly(3L);
        undo.rollback();
        assertThat(h.all()).extracting(ChatRecord::msgId).containsExactly(1L, 2L);
        assertThat(h.chars()).isEqualTo(800);
    }

    @Test
    void theDefaultBoundIsSixtyFourMebiCharacters() {
        assertThat(ChatHistory.MAX_CHARS).isEqualTo(64L * 1024 * 1024);
    }
}
