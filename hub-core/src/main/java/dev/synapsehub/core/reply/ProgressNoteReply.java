package dev.synapsehub.core.reply;

import dev.synapsehub.core.board.ProgressNote;

/** A progress note was posted: render {@code ledger_progress_posted}. */
public record ProgressNoteReply(ProgressNote note) implements Reply {
    @Override
    public String taskId() {
        return note.taskId();
    }
}
