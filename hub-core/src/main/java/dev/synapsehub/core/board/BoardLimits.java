package dev.synapsehub.core.board;

/**
 * Retention caps for progress notes (wire contract §4.4), re-applied on replay (INV-RR-2).
 * Caps below one are raised to one.
 */
public record BoardLimits(int maxNotes, int maxNotesPerAuthor, int maxNotesPerTask) {
    /** The contract defaults: 5000 total, 1000 per author, 1000 per task. */
    public static final BoardLimits DEFAULTS = new BoardLimits(5000, 1000, 1000);

    public BoardLimits {
        maxNotes = Math.max(1, maxNotes);
        maxNotesPerAuthor = Math.max(1, maxNotesPerAuthor);
        maxNotesPerTask = Math.max(1, maxNotesPerTask);
    }
}
