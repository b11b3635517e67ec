package dev.synapsehub.core.board;

import dev.synapsehub.core.PythonWhitespace;

import java.util.Locale;
import java.util.Optional;

/** Kind of a progress note (wire contract §5.13); {@link #NOTE} is the default. */
public enum NoteKind {
    NOTE, BLOCKED, ASSESSMENT, USAGE, APPROVAL;

    /** The wire spelling. */
    public String wire() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Parses the wire spelling; null or blank is {@link #NOTE}; an unknown kind is empty. */
    public static Optional<NoteKind> fromWire(String s) {
        if (PythonWhitespace.isBlank(s)) {
            return Optional.of(NOTE);
        }
        String t = PythonWhitespace.strip(s);
        for (NoteKind kind : values()) {
            if (kind.wire().equals(t)) {
                return Optional.of(kind);
            }
        }
        return Optional.empty();
    }
}
