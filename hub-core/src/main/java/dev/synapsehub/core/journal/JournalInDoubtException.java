package dev.synapsehub.core.journal;

/**
 * An append whose commit failed in a way that leaves its outcome unknown (an fsync that
 * failed after the batch was written): the batch may yet be durable. Nothing may be answered
 * about it until {@link Journal#settle} says whether it committed.
 */
public class JournalInDoubtException extends JournalException {
    private final long firstSeq;

    public JournalInDoubtException(String message, long firstSeq, Throwable cause) {
        super(message, cause);
        this.firstSeq = firstSeq;
    }

    /** The seq the batch's first event has if it did commit. */
    public long firstSeq() {
        return firstSeq;
    }
}
