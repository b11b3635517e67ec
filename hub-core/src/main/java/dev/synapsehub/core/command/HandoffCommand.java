package dev.synapsehub.core.command;

/**
 * Atomically move a held task to another agent (INV-CR-2).
 *
 * @param recipientOnline whether the recipient was bound to a live connection when the request
 *     arrived; the core refuses an offline recipient only after a keyed retry has been answered
 *     from the idempotency ledger (INV-CR-1), so presence never overrides a first answer
 * @param recipientPrincipal the recipient's quota principal, charged for the moved claim
 * @param note replacement note; null or blank keeps the current one
 * @param epoch optional epoch fence
 */
public record HandoffCommand(
        String agent,
        String taskId,
        String recipient,
        boolean recipientOnline,
        String recipientPrincipal,
        String note,
        Long epoch) implements ClaimFamilyCommand {
}
