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
     * The snapshot of a board holding {@code tasks} (any order) and {@code progress}: the tasks
     * sorted by id, and ready the open ones whose every dependency is among them, done or cancelled.
     */
    public static BoardSnapshot of(java.util.Collection<BoardTask> tasks, List<ProgressNote> progress) {
        java.util.Map<String, BoardTask> byId = new java.util.HashMap<>();
        for (BoardTask t : tasks) {
            byId.put(t.taskId(), t);
        }
        return of(tasks, byId::get, progress);
    }

    /** As {@link #of(java.util.Collection, List)}, dependencies looked up by {@code byId} (null: absent). */
    static BoardSnapshot of(java.util.Collection<BoardTask> tasks, java.util.function.Function<String, BoardTask> byId,
                            List<ProgressNote> progress) {
        List<BoardTask> sorted = new java.util.ArrayList<>(tasks);
        sorted.sort(java.util.Comparator.comparing(BoardTask::taskId));
        List<String> ready = new java.util.ArrayList<>();
        for (BoardTask task : sorted) {
            if (task.status() == BoardStatus.OPEN && task.dependsOn().stream().allMatch(d -> {
                BoardTask dep = byId.apply(d);
                return dep != null && dep.status().terminal();
            })) {
                ready.add(task.taskId());
            }
        }
        return new BoardSnapshot(sorted, ready, progress);
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
