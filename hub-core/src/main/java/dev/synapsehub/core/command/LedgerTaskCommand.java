package dev.synapsehub.core.command;

import java.util.List;

/**
 * {@code ledger_task}: declare or re-declare a board task (wire contract §5.11).
 *
 * @param dependsOn raw dependency ids; blank, self and duplicate entries are dropped by the core
 * @param suggestedOwner advisory owner; null is empty
 * @param project namespace scope; null or blank keeps the current scope
 * @param expectedVersion board CAS (an undeclared task is at version 0); null skips the check
 * @param causalParent the validated {@code causal_parent} object as compact JSON, journaled only; may be null
 */
public record LedgerTaskCommand(
        String agent,
        String taskId,
        String title,
        String description,
        List<String> dependsOn,
        String suggestedOwner,
        String project,
        Long expectedVersion,
        String causalParent) implements BoardCommand {
    public LedgerTaskCommand {
        dependsOn = dependsOn == null ? List.of() : java.util.Collections.unmodifiableList(new java.util.ArrayList<>(dependsOn));
    }

    /** A plain declaration: title only. */
    public static LedgerTaskCommand of(String agent, String taskId, String title, String... dependsOn) {
        return new LedgerTaskCommand(agent, taskId, title, null, List.of(dependsOn), null, null, null, null);
    }
}
