package dev.synapsehub.core.command;

/**
 * Journals one audit-only record (federation); decided to exactly one {@code AuditRecordEvent}.
 *
 * @param agent who records it (the hub's own id for federation records)
 */
public record AuditRecordCommand(String agent, String kind, String payloadJson) implements Command {
}
