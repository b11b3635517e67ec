package dev.synapsehub.journal.migration;

/** An import that was refused before anything was written; the message says why and what to do. */
public final class ImportRefusedException extends Exception {
    /** Whose fault: a source that cannot be read as a v2 hub database, or a target that must not be overwritten. */
    public enum Side { SOURCE, TARGET }

    private final Side side;

    public ImportRefusedException(Side side, String message) {
        super(message);
        this.side = side;
    }

    public ImportRefusedException(Side side, String message, Throwable cause) {
        super(message, cause);
        this.side = side;
    }

    /** Which file the refusal is about. */
    public Side side() {
        return side;
    }
}
