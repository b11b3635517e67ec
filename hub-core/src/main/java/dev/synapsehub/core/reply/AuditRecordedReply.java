package dev.synapsehub.core.reply;

/**
 * An audit record was journaled. No frame of its own.
 *
 * @param kind the record's kind
 * @param seq the journal seq the record took (guard evidence answers it as {@code audit_seq}, A3)
 */
public record AuditRecordedReply(String kind, long seq) implements Reply {
    /** A record whose seq nobody reads. */
    public AuditRecordedReply(String kind) {
        this(kind, 0);
    }
}
