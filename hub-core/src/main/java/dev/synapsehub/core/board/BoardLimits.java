package dev.synapsehub.core.board;

/**
 * Retention caps for progress notes (wire contract §4.4), re-applied on replay (INV-RR-2),
 * and the task cap of {@code board_snapshot} (§6.5). Note caps below one are raised to one.
 *
 * @param taskCap {@code --board-task-cap}: tasks a {@code board_snapshot} lists at most; 0 (the
 *     default) lists them all. It trims the reply, never the board.
 */
public record BoardLimits(int maxNotes, int maxNotesPerAuthor, int maxNotesPerTask, int taskCap) {
    /** The contract defaults: 5000 total, 1000 per author, 1000 per task, no task cap. */
    public static final BoardLimits DEFAULTS = new BoardLimits(5000, 1000, 1000);

    public BoardLimits {
        maxNotes = Math.max(1, maxNotes);
        maxNotesPerAuthor = Math.max(1, maxNotesPerAuthor);
        maxNotesPerTask = Math.max(1, maxNotesPerTask);
        taskCap = Math.max(0, taskCap);
    }

    /** Note caps without a task cap. */
    public BoardLimits(int maxNotes, int maxNotesPerAuthor, int maxNotesPerTask) {
        this(maxNotes, maxNotesPerAuthor, maxNotesPerTask, 0);
    }
}
