package dev.synapsehub.core.command;

/**
 * Atomically move a held task to another agent (INV-CR-2).
 *
 * @param recipientPrincipal the recipient's quota principal, charged for the moved claim
 * @param note replacement note; null or blank keeps the current one
 * @param epoch optional epoch fence
 */
public record HandoffCommand(
        String agent,
        String taskId,
        String recipient,
        String recipientPrincipal,
        String note,
        Long epoch) implements ClaimFamilyCommand {
}
