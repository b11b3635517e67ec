package dev.synapsehub.journal;

import dev.synapsehub.core.journal.JournalException;

/** The file at the journal path is not one this hub may open; it was left untouched. */
public class JournalRefusedException extends JournalException {
    public JournalRefusedException(String message) {
        super(message);
    }

    public JournalRefusedException(String message, Throwable cause) {
        super(message, cause);
    }
}
