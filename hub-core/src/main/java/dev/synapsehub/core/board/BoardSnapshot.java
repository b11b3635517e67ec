package dev.synapsehub.core.board;

import java.util.List;

/**
 * The {@code board_snapshot} content (§6.5).
 *
 * @param tasks every task, sorted by id
 * @param ready ids of open tasks whose every dependency exists and is done or cancelled, sorted
 * @param progress retained notes in insertion order
 */
public record BoardSnapshot(List<BoardTask> tasks, List<String> ready, List<ProgressNote> progress) {
    public BoardSnapshot {
        tasks = List.copyOf(tasks);
        ready = List.copyOf(ready);
        progress = List.copyOf(progress);
    }

    /**
     * The tasks a {@code board_snapshot} with {@code --board-task-cap cap} lists (§6.5): all of
     * them when {@code cap} is 0 or not exceeded; otherwise the {@code cap} kept are the tasks
     * not done or cancelled first, the most recently updated first within each class (task id
     * breaks a tie), re-sorted by id. {@link #ready} is never trimmed.
     */
    public List<BoardTask> capped(int cap) {
        if (cap <= 0 || tasks.size() <= cap) {
            return tasks;
        }
        List<BoardTask> ranked = new java.util.ArrayList<>(tasks);
        ranked.sort(java.util.Comparator.comparing((BoardTask t) -> t.status().terminal())
                .thenComparing(BoardTask::updatedAt, java.util.Comparator.reverseOrder())
                .thenComparing(BoardTask::taskId));
        List<BoardTask> kept = new java.util.ArrayList<>(ranked.subList(0, cap));
        kept.sort(java.util.Comparator.comparing(BoardTask::taskId));
        return List.copyOf(kept);
    }
}
