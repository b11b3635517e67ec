package dev.synapsehub.core.journal;

/**
 * An append whose outcome is not known: a replicated journal lost its quorum or its leadership
 * after proposing the batch, so the batch may still commit. Callers must not say that nothing
 * was applied; a keyed retry learns the outcome from the idempotency ledger.
 */
public class CommitUnknownException extends JournalException {
    public CommitUnknownException(String message, Throwable cause) {
        super(message, cause);
    }
}
