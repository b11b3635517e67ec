package dev.synapsehub.core.journal;

/**
 * The journal could not do what was asked; for an append, nothing of the batch was committed
 * (except for {@link CommitUnknownException}, whose outcome is not known).
 */
public class JournalException extends Exception {
    public JournalException(String message) {
        super(message);
    }

    public JournalException(String message, Throwable cause) {
        super(message, cause);
    }
}
