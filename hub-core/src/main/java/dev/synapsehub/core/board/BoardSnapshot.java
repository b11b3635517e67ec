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
}
