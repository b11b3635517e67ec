package dev.synapsehub.core.journal;

/**
 * Something outside the coordination state that still needs journal rows, so retention must
 * not compact them: a federation peer's log cursor, a backup in progress. Registered with the
 * journal's retention; asked on the journal's writer thread each time retention runs.
 */
@FunctionalInterface
public interface RetentionHold {
    /** Rows with a seq greater than this must be kept; {@link Long#MAX_VALUE} holds nothing. */
    long keepAfter();
}
