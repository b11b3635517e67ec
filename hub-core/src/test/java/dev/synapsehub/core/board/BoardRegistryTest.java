package dev.synapsehub.core.board;

import dev.synapsehub.core.undo.UndoLog;
import dev.synapsehub.core.claim.Decision;
import dev.synapsehub.core.command.BoardCommand;
import dev.synapsehub.core.command.LedgerProgressCommand;
import dev.synapsehub.core.command.LedgerTaskCommand;
import dev.synapsehub.core.command.LedgerTaskUpdateCommand;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.reply.BoardTaskReply;
import dev.synapsehub.core.reply.Refusal;
import dev.synapsehub.core.reply.Reply;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class BoardRegistryTest {
    private final BoardRegistry board = new BoardRegistry();
    private final List<CoordinationEvent> log = new ArrayList<>();

    private Reply run(BoardRegistry b, BoardCommand c, double t) {
        Decision d = b.decide(c, t);
        d.events().forEach(b::apply);
        if (b == board) {
            log.addAll(d.events());
        }
        return d.reply();
    }

    private Reply run(BoardCommand c, double t) {
        return run(board, c, t);
    }

    private static LedgerTaskCommand declare(String id, String title, Long expected, String project, String... deps) {
        return new LedgerTaskCommand("alice", id, title, "d", List.of(deps), "bob", project, expected, null);
    }

    private static Refusal refusal(Reply r) {
        assertThat(r).isInstanceOf(Reply.Denied.class);
        return ((Reply.Denied) r).refusal();
    }

    @Test
    void theUnsortedTasksMakeTheSameSnapshotOnAReadersThread() {
        run(declare("T3", "three", null, "p", "T1"), 100);
        run(declare("T1", "one", null, "p"), 101);
        run(declare("T2", "two", null, "p", "T1", "T9"), 102);
        run(declare("T4", "four", null, "p", "T3"), 103);
        run(LedgerTaskUpdateCommand.status("bob", "T1", "done"), 104);

        BoardSnapshot fromReferences = BoardSnapshot.of(board.tasksUnsorted(), board.notes());
        assertThat(fromReferences).isEqualTo(board.snapshot());
        assertThat(fromReferences.tasks()).extracting(BoardTask::taskId).containsExactly("T1", "T2", "T3", "T4");
        assertThat(fromReferences.ready()).containsExactly("T3"); // T2 waits for T9, never declared; T4 for T3
    }

    @Test
    void newTaskIsOpenAtVersionOneCreatedBySender() {
        Reply r = run(LedgerTaskCommand.of("alice", "  T1 ", " Title "), 100);
        BoardTask t = ((BoardTaskReply) r).task();
        assertThat(((BoardTaskReply) r).created()).isTrue();
        assertThat(t.taskId()).isEqualTo("T1");
        assertThat(t.title()).isEqualTo("Title");
        assertThat(t.status()).isEqualTo(BoardStatus.OPEN);
        assertThat(t.version()).isEqualTo(1);
        assertThat(t.createdBy()).isEqualTo("alice");
        assertThat(t.createdAt()).isEqualTo(100);
        assertThat(t.updatedAt()).isEqualTo(100);
        assertThat(log).hasSize(1);
        assertThat(log.get(0).kind()).isEqualTo("ledger_task");
        assertThat(log.get(0).durability()).isEqualTo(dev.synapsehub.core.event.Durability.FULL);
    }

    @Test
    void redeclareReplacesFieldsKeepsStatusAndBumpsVersion() {
        run(declare("T1", "one", null, "p"), 100);
        run(LedgerTaskUpdateCommand.status("bob", "T1", "in_progress"), 101);
        Reply r = run(new LedgerTaskCommand("carol", "T1", "uno", null, List.of("X"), null, null, null, null), 102);
        BoardTask t = ((BoardTaskReply) r).task();
        assertThat(((BoardTaskReply) r).created()).isFalse();
        assertThat(t.title()).isEqualTo("uno");
        assertThat(t.description()).isEmpty();
        assertThat(t.dependsOn()).containsExactly("X");
        assertThat(t.suggestedOwner()).isEmpty();
        assertThat(t.project()).isEqualTo("p");
        assertThat(t.status()).isEqualTo(BoardStatus.IN_PROGRESS);
        assertThat(t.version()).isEqualTo(3);
        assertThat(t.createdBy()).isEqualTo("alice");
        assertThat(t.createdAt()).isEqualTo(100);
        assertThat(t.updatedAt()).isEqualTo(102);
    }

    @Test
    void missingIdOrTitleIsRefused() {
        assertThat(refusal(run(LedgerTaskCommand.of("a", " ", "x"), 1))).isEqualTo(Refusal.TASK_ID_REQUIRED);
        assertThat(refusal(run(LedgerTaskCommand.of("a", "T", "  "), 1))).isEqualTo(Refusal.TITLE_REQUIRED);
        assertThat(refusal(run(LedgerTaskCommand.of("a", "T", null), 1))).isEqualTo(Refusal.TITLE_REQUIRED);
        assertThat(board.taskCount()).isZero();
        assertThat(log).isEmpty();
    }

    @Test
    void dependenciesDropBlankSelfAndDuplicates() {
        Reply r = run(declare("T", "t", null, null, " A ", "", "T", "A", "B", "  ", "B"), 1);
        assertThat(((BoardTaskReply) r).task().dependsOn()).containsExactly("A", "B");
    }

    @Test
    void cycleThroughExistingTasksIsRefused() {
        run(declare("A", "a", null, null, "B"), 1);
        run(declare("B", "b", null, null, "C"), 2);
        Reply r = run(declare("C", "c", null, null, "A"), 3);
        assertThat(refusal(r)).isEqualTo(Refusal.DEPENDENCY_CYCLE);
        assertThat(((Reply.Denied) r).message()).contains("C -> A -> B -> C");
        assertThat(board.task("C")).isEmpty();
        // Re-declaring A to depend on C (undeclared) is fine; unknown deps cannot close a cycle.
        assertThat(run(declare("A", "a", null, null, "C", "Z"), 4).granted()).isTrue();
        // Now C -> A -> C would close.
        assertThat(refusal(run(declare("C", "c", null, null, "A"), 5))).isEqualTo(Refusal.DEPENDENCY_CYCLE);
    }

    @Test
    void redeclaringAwayFromACycleIsAllowed() {
        run(declare("A", "a", null, null, "B"), 1);
        run(declare("B", "b", null, null), 2);
        // B's old deps are replaced, so B -> nothing; A -> B is not a cycle.
        assertThat(run(declare("B", "b", null, null, "Q"), 3).granted()).isTrue();
    }

    @Test
    void expectedVersionCasTreatsUndeclaredAsZero() {
        assertThat(refusal(run(declare("T", "t", 1L, null), 1))).isEqualTo(Refusal.VERSION_CONFLICT);
        assertThat(run(declare("T", "t", 0L, null), 2).granted()).isTrue();
        assertThat(refusal(run(declare("T", "t", 0L, null), 3))).isEqualTo(Refusal.VERSION_CONFLICT);
        assertThat(run(declare("T", "t", 1L, null), 4).granted()).isTrue();
        assertThat(refusal(run(new LedgerTaskUpdateCommand("a", "T", "done", null, null, 1L, null), 5)))
                .isEqualTo(Refusal.VERSION_CONFLICT);
        assertThat(run(new LedgerTaskUpdateCommand("a", "T", "done", null, null, 2L, null), 6).granted()).isTrue();
        assertThat(board.task("T").orElseThrow().version()).isEqualTo(3);
    }

    @Test
    void projectScopeRule() {
        run(declare("T", "t", null, null), 1);
        assertThat(board.task("T").orElseThrow().project()).isEmpty();
        assertThat(run(declare("T", "t", null, "p1"), 2).granted()).isTrue();
        assertThat(refusal(run(declare("T", "t", null, "p2"), 3))).isEqualTo(Refusal.PROJECT_CONFLICT);
        assertThat(run(declare("T", "t", null, ""), 4).granted()).isTrue();
        assertThat(board.task("T").orElseThrow().project()).isEqualTo("p1");
        assertThat(run(declare("T", "t", null, " p1 "), 5).granted()).isTrue();
        // ledger_task_update may replace or clear the project.
        run(new LedgerTaskUpdateCommand("a", "T", null, null, "", null, null), 6);
        assertThat(board.task("T").orElseThrow().project()).isEmpty();
    }

    @Test
    void updateChangesStatusOwnerProjectAndBumpsVersion() {
        run(declare("T", "t", null, "p"), 1);
        Reply r = run(new LedgerTaskUpdateCommand("x", "T", " blocked ", "", null, null, null), 2);
        BoardTask t = ((BoardTaskReply) r).task();
        assertThat(t.status()).isEqualTo(BoardStatus.BLOCKED);
        assertThat(t.suggestedOwner()).isEmpty();
        assertThat(t.project()).isEqualTo("p");
        assertThat(t.version()).isEqualTo(2);
        assertThat(t.updatedAt()).isEqualTo(2);
        r = run(new LedgerTaskUpdateCommand("x", "T", null, "zed", null, null, null), 3);
        assertThat(((BoardTaskReply) r).task().suggestedOwner()).isEqualTo("zed");
        assertThat(((BoardTaskReply) r).task().status()).isEqualTo(BoardStatus.BLOCKED);
    }

    @Test
    void updateRefusals() {
        assertThat(refusal(run(LedgerTaskUpdateCommand.status("a", "nope", "done"), 1))).isEqualTo(Refusal.NOT_FOUND);
        assertThat(refusal(run(LedgerTaskUpdateCommand.status("a", "", "done"), 1))).isEqualTo(Refusal.TASK_ID_REQUIRED);
        run(declare("T", "t", null, null), 1);
        assertThat(refusal(run(LedgerTaskUpdateCommand.status("a", "T", "DONE"), 2))).isEqualTo(Refusal.UNKNOWN_STATUS);
        assertThat(refusal(run(LedgerTaskUpdateCommand.status("a", "T", "claimed"), 2))).isEqualTo(Refusal.UNKNOWN_STATUS);
        assertThat(board.task("T").orElseThrow().version()).isEqualTo(1);
    }

    @Test
    void snapshotSortsTasksAndComputesReady() {
        run(declare("C", "c", null, null, "A", "B"), 1);
        run(declare("A", "a", null, null), 2);
        run(declare("B", "b", null, null), 3);
        run(declare("D", "d", null, null, "MISSING"), 4);
        run(declare("E", "e", null, null), 5);
        run(LedgerTaskUpdateCommand.status("x", "E", "in_progress"), 6);
        BoardSnapshot s = board.snapshot();
        assertThat(s.tasks()).extracting(BoardTask::taskId).containsExactly("A", "B", "C", "D", "E");
        assertThat(s.ready()).containsExactly("A", "B");
        run(LedgerTaskUpdateCommand.status("x", "A", "done"), 7);
        run(LedgerTaskUpdateCommand.status("x", "B", "cancelled"), 8);
        assertThat(board.snapshot().ready()).containsExactly("C");
    }

    @Test
    void progressKindsAndRefusal() {
        Reply r = run(new LedgerProgressCommand("alice", " T ", null, "hello"), 5);
        assertThat(r).isInstanceOf(dev.synapsehub.core.reply.ProgressNoteReply.class);
        ProgressNote n = ((dev.synapsehub.core.reply.ProgressNoteReply) r).note();
        assertThat(n).isEqualTo(new ProgressNote("T", "alice", NoteKind.NOTE, "hello", 5));
        assertThat(log.get(0).kind()).isEqualTo("ledger_progress");
        assertThat(log.get(0).durability()).isEqualTo(dev.synapsehub.core.event.Durability.NORMAL);
        for (String k : List.of("note", "blocked", "assessment", "usage", "approval")) {
            assertThat(run(new LedgerProgressCommand("a", "", k, "x"), 6).granted()).isTrue();
        }
        assertThat(refusal(run(new LedgerProgressCommand("a", "", "rant", "x"), 7))).isEqualTo(Refusal.UNKNOWN_KIND);
        assertThat(board.notes()).hasSize(6);
    }

    @Test
    void progressRetentionDropsOldestPerAuthorPerTaskAndTotal() {
        BoardRegistry small = new BoardRegistry(new BoardLimits(10, 2, 3));
        run(small, new LedgerProgressCommand("A", "T", null, "a1"), 1);
        run(small, new LedgerProgressCommand("A", "T", null, "a2"), 2);
        run(small, new LedgerProgressCommand("A", "T", null, "a3"), 3);
        run(small, new LedgerProgressCommand("B", "T", null, "b1"), 4);
        assertThat(small.notes()).extracting(ProgressNote::text).containsExactly("a2", "a3", "b1");
        run(small, new LedgerProgressCommand("C", "T", null, "c1"), 5);
        assertThat(small.notes()).extracting(ProgressNote::text).containsExactly("a3", "b1", "c1");
        BoardRegistry tiny = new BoardRegistry(new BoardLimits(2, 5, 5));
        for (int i = 0; i < 5; i++) {
            run(tiny, new LedgerProgressCommand("A" + i, "T" + i, null, "n" + i), i);
        }
        assertThat(tiny.notes()).extracting(ProgressNote::text).containsExactly("n3", "n4");
    }

    @Test
    void replayYieldsIdenticalBoardAndBoundsHold() {
        BoardLimits limits = new BoardLimits(50, 20, 15);
        BoardRegistry live = new BoardRegistry(limits);
        List<CoordinationEvent> events = new ArrayList<>();
        for (int i = 0; i < 400; i++) {
            BoardCommand c;
            if (i % 7 == 0) {
                c = declare("T" + (i % 13), "title" + i, null, null, "T" + ((i + 3) % 13));
            } else if (i % 11 == 0) {
                c = LedgerTaskUpdateCommand.status("u", "T" + (i % 13), i % 2 == 0 ? "done" : "open");
            } else {
                c = new LedgerProgressCommand("author" + (i % 3), "T" + (i % 5), null, "note" + i);
            }
            Decision d = live.decide(c, i);
            d.events().forEach(live::apply);
            events.addAll(d.events());
        }
        BoardRegistry replayed = new BoardRegistry(limits);
        events.forEach(replayed::apply);
        assertThat(replayed.snapshot()).isEqualTo(live.snapshot());
        assertThat(replayed.notes()).hasSizeLessThanOrEqualTo(50);
        for (int a = 0; a < 3; a++) {
            assertThat(replayed.noteCountByAuthor("author" + a)).isLessThanOrEqualTo(20);
        }
        for (int t = 0; t < 5; t++) {
            assertThat(replayed.noteCountByTask("T" + t)).isLessThanOrEqualTo(15);
        }
    }

    @Test
    void rollbackRestoresExactly() {
        UndoLog undo = new UndoLog();
        BoardRegistry b = new BoardRegistry(new BoardLimits(4, 3, 3), undo);
        run(b, declare("A", "a", null, null), 1);
        for (int i = 0; i < 4; i++) {
            run(b, new LedgerProgressCommand("X", "T", null, "x" + i), 2 + i);
        }
        BoardSnapshot before = b.snapshot();
        undo.begin();
        run(b, declare("A", "changed", null, "p"), 10);
        run(b, declare("B", "b", null, null), 11);
        run(b, new LedgerProgressCommand("X", "T", null, "y1"), 12);
        run(b, new LedgerProgressCommand("Y", "U", null, "y2"), 13);
        run(b, new LedgerProgressCommand("Y", "U", null, "y3"), 14);
        assertThat(b.snapshot()).isNotEqualTo(before);
        undo.rollback();
        assertThat(b.snapshot()).isEqualTo(before);
        assertThat(b.noteCountByAuthor("X")).isEqualTo(3);
        assertThat(b.noteCountByTask("T")).isEqualTo(3);
        assertThat(b.noteCountByAuthor("Y")).isZero();
        // Still behaves identically afterwards.
        run(b, new LedgerProgressCommand("X", "T", null, "z"), 20);
        assertThat(b.notes()).extracting(ProgressNote::text).containsExactly("x2", "x3", "z");
    }

    /** The index the dark-seat check reads, against the filter over every task it replaces. */
    private static List<String> openSuggestedIds(BoardRegistry b) {
        return b.openSuggested().stream().map(BoardTask::taskId).sorted().toList();
    }

    private static List<String> openSuggestedByScan(BoardRegistry b) {
        return b.image().tasks().stream().filter(t -> !t.suggestedOwner().isBlank() && !t.status().terminal())
                .map(BoardTask::taskId).sorted().toList();
    }

    @Test
    void openSuggestedTasksFollowDeclarationsStatusChangesRollbackAndRestore() {
        UndoLog undo = new UndoLog();
        BoardRegistry b = new BoardRegistry(new BoardLimits(64, 64, 64), undo);
        run(b, declare("A", "a", null, null), 1); // suggested owner bob
        run(b, declare("B", "b", null, null), 2);
        run(b, new LedgerTaskCommand("alice", "C", "c", "d", List.of(), null, null, null, null), 3); // no owner
        assertThat(openSuggestedIds(b)).containsExactly("A", "B").isEqualTo(openSuggestedByScan(b));
        run(b, LedgerTaskUpdateCommand.status("bob", "A", "done"), 4);
        run(b, LedgerTaskUpdateCommand.status("bob", "B", "blocked"), 5);
        assertThat(openSuggestedIds(b)).as("done leaves, blocked stays").containsExactly("B");
        undo.begin();
        run(b, LedgerTaskUpdateCommand.status("bob", "B", "cancelled"), 6);
        run(b, new LedgerTaskCommand("alice", "C", "c", "d", List.of(), "carol", null, null, null), 7); // owner added
        run(b, declare("D", "d", null, null), 8);
        assertThat(openSuggestedIds(b)).containsExactly("C", "D").isEqualTo(openSuggestedByScan(b));
        undo.rollback();
        assertThat(openSuggestedIds(b)).as("rolled back exactly").containsExactly("B").isEqualTo(openSuggestedByScan(b));
        BoardRegistry restored = new BoardRegistry();
        restored.restore(b.image());
        assertThat(openSuggestedIds(restored)).containsExactly("B");
        run(restored, new LedgerTaskCommand("alice", "B", "b", "d", List.of(), " ", null, null, null), 9); // owner blanked
        assertThat(openSuggestedIds(restored)).isEmpty();
        assertThat(openSuggestedByScan(restored)).isEmpty();
    }

    /** §5.12/§5.13 fields are trimmed with Python's str.strip: U+00A0, U+2007, U+202F, U+0085 too. */
    @Test
    void boardFieldsAreTrimmedOfPythonWhitespace() {
        run(declare("T0", "zero", null, "p"), 100);
        Reply declared = run(new LedgerTaskCommand("alice", "\u00A0T1\u2007", "\u202Fone\u0085", "\u00A0d",
                List.of("T0\u00A0", "\u2007", "\u202FT1"), "\u00A0bob\u00A0", "\u0085p\u202F", null, null), 101);
        BoardTask task = ((BoardTaskReply) declared).task();
        assertThat(task.taskId()).isEqualTo("T1");
        assertThat(task.title()).isEqualTo("one");
        assertThat(task.description()).isEqualTo("d");
        assertThat(task.dependsOn()).containsExactly("T0"); // a blank and a self-reference dropped
        assertThat(task.suggestedOwner()).isEqualTo("bob");
        assertThat(task.project()).isEqualTo("p");

        Reply updated = run(new LedgerTaskUpdateCommand("bob", "T1\u00A0", "done\u2007", "\u00A0", "\u202Fq",
                null, null), 102);
        BoardTask after = ((BoardTaskReply) updated).task();
        assertThat(after.status()).isEqualTo(BoardStatus.DONE);
        assertThat(after.suggestedOwner()).isEmpty();
        assertThat(after.project()).isEqualTo("q");
        assertThat(run(LedgerTaskUpdateCommand.status("bob", "T1", "\u00A0"), 103)).isInstanceOf(BoardTaskReply.class);

        Reply note = run(new LedgerProgressCommand("bob", "\u2007T1", "blocked\u00A0", "stuck"), 104);
        assertThat(((dev.synapsehub.core.reply.ProgressNoteReply) note).note().kind()).isEqualTo(NoteKind.BLOCKED);
        assertThat(((dev.synapsehub.core.reply.ProgressNoteReply) note).note().taskId()).isEqualTo("T1");
        Reply defaulted = run(new LedgerProgressCommand("bob", "T1", "\u202F", "plain"), 105);
        assertThat(((dev.synapsehub.core.reply.ProgressNoteReply) defaulted).note().kind()).isEqualTo(NoteKind.NOTE);
    }
}
