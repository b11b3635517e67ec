package dev.synapsehub.core.command;

/**
 * {@code ledger_progress}: post a progress note (wire contract §5.13).
 *
 * @param taskId the task concerned; null or empty is a board-wide note
 * @param kind wire spelling; null or blank is {@code note}
 * @param text the note (the edge falls back to {@code payload})
 */
public record LedgerProgressCommand(String agent, String taskId, String kind, String text) implements BoardCommand {
}
