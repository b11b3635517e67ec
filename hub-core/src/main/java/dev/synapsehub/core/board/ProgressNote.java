package dev.synapsehub.core.board;

import java.util.Objects;

/** A progress note on the board (wire note object, §6.4); an empty task id is a board-wide note. */
public record ProgressNote(String taskId, String author, NoteKind kind, String text, double postedAt) {
    public ProgressNote {
        taskId = taskId == null ? "" : taskId;
        author = author == null ? "" : author;
        Objects.requireNonNull(kind, "kind");
        text = text == null ? "" : text;
    }
}
