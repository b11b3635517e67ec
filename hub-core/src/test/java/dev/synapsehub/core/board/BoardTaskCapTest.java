package dev.synapsehub.core.board;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The task cap of {@code board_snapshot} (contract §6.5): which tasks a capped reply keeps. */
class BoardTaskCapTest {
    private static BoardTask task(String id, BoardStatus status, double updatedAt) {
        return new BoardTask(id, id, "", List.of(), status, "", "", 1, "ann", 1.0, updatedAt);
    }

    @Test
    void openTasksFirstNewestFirstThenSortedByIdAndReadyUntouched() {
        BoardSnapshot s = new BoardSnapshot(List.of(
                task("A", BoardStatus.DONE, 90),
                task("B", BoardStatus.OPEN, 10),
                task("C", BoardStatus.IN_PROGRESS, 30),
                task("D", BoardStatus.CANCELLED, 95),
                task("E", BoardStatus.BLOCKED, 20),
                task("F", BoardStatus.OPEN, 20)),
                List.of("B", "F"), List.of());
        assertThat(s.capped(2)).extracting(BoardTask::taskId).containsExactly("C", "E");
        assertThat(s.capped(3)).extracting(BoardTask::taskId).containsExactly("C", "E", "F");
        assertThat(s.capped(5)).extracting(BoardTask::taskId).containsExactly("B", "C", "D", "E", "F");
        assertThat(s.capped(6)).isEqualTo(s.tasks());
        assertThat(s.capped(0)).as("0: no cap").isEqualTo(s.tasks());
        assertThat(s.ready()).containsExactly("B", "F");
    }

    @Test
    void theCapIsALimitOfTheReplyNotOfTheBoard() {
        BoardLimits limits = new BoardLimits(5000, 1000, 1000, 1);
        assertThat(limits.taskCap()).isEqualTo(1);
        assertThat(new BoardLimits(1, 1, 1, -5).taskCap()).isZero();
        assertThat(BoardLimits.DEFAULTS.taskCap()).isZero();
        BoardRegistry board = new BoardRegistry(limits);
        for (String id : List.of("T1", "T2", "T3")) {
            board.decide(new dev.synapsehub.core.command.LedgerTaskCommand("ann", id, id, "", List.of(), "", "",
                    null, null), 1.0).events().forEach(board::apply);
        }
        assertThat(board.taskCount()).isEqualTo(3);
        assertThat(board.snapshot().tasks()).hasSize(3);
    }
}
