package dev.synapsehub.core.reply;

import dev.synapsehub.core.board.BoardTask;

/**
 * A board task was declared or updated: render {@code ledger_task_posted} (for
 * {@code ledger_task}) or {@code ledger_task_updated} (for {@code ledger_task_update}).
 *
 * @param created true when the declaration created the task
 */
public record BoardTaskReply(BoardTask task, boolean created) implements Reply {
    @Override
    public String taskId() {
        return task.taskId();
    }
}
