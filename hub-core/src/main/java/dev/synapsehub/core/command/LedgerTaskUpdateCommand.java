package dev.synapsehub.core.command;

/**
 * {@code ledger_task_update}: change an existing board task (wire contract §5.12).
 * Null fields are left unchanged; an empty owner or project clears it.
 *
 * @param status wire spelling: open, in_progress, blocked, done, cancelled
 * @param expectedVersion board CAS; null skips the check
 * @param causalParent validated {@code causal_parent} as compact JSON, journaled only; may be null
 */
public record LedgerTaskUpdateCommand(
        String agent,
        String taskId,
        String status,
        String suggestedOwner,
        String project,
        Long expectedVersion,
        String causalParent) implements BoardCommand {

    /** A status change without CAS. */
    public static LedgerTaskUpdateCommand status(String agent, String taskId, String status) {
        return new LedgerTaskUpdateCommand(agent, taskId, status, null, null, null, null);
    }
}
