package dev.synapsehub.net.protocol;

import dev.synapsehub.core.journal.JournalException;

/**
 * A historical read (mailbox replay, ack resolution) that the journal could not serve. It fails
 * the read so the request is answered {@code journal_failed}, instead of looking like an empty
 * history, which would silently break at-least-once replay.
 */
final class JournalReadException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    JournalReadException(JournalException cause) {
        super(cause.getMessage(), cause);
    }
}
