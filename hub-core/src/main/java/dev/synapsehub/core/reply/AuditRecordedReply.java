package dev.synapsehub.core.reply;

/** An audit record was journaled. No frame. */
public record AuditRecordedReply(String kind) implements Reply {
}
