package dev.synapsehub.core.event;

import dev.synapsehub.core.board.BoardTask;

/**
 * A board task after a declaration or update: the snapshot replaces the task on apply.
 *
 * @param causalParent the request's {@code causal_parent} as compact JSON (stored as
 *     {@code _causal_parent}, never part of the task), or null
 */
public record LedgerTaskEvent(double ts, BoardTask task, String causalParent) implements CoordinationEvent {
    @Override
    public String kind() {
        return "ledger_task";
    }

    @Override
    public Durability durability() {
        return Durability.FULL;
    }
}
