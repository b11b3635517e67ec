package dev.synapsehub.core.board;

import dev.synapsehub.core.PythonWhitespace;

import java.util.Locale;
import java.util.Optional;

/** Status of a board task (wire contract §5.12); any status may follow any other. */
public enum BoardStatus {
    OPEN, IN_PROGRESS, BLOCKED, DONE, CANCELLED;

    /** The wire spelling, e.g. {@code in_progress}. */
    public String wire() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Whether the status settles a dependency: done or cancelled. */
    public boolean terminal() {
        return this == DONE || this == CANCELLED;
    }

    /** Parses the exact wire spelling (after trimming); anything else is empty. */
    public static Optional<BoardStatus> fromWire(String s) {
        if (s == null) {
            return Optional.empty();
        }
        String t = PythonWhitespace.strip(s);
        for (BoardStatus status : values()) {
            if (status.wire().equals(t)) {
                return Optional.of(status);
            }
        }
        return Optional.empty();
    }
}
