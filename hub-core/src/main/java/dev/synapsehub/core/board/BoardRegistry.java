package dev.synapsehub.core.board;

import dev.synapsehub.core.PythonWhitespace;
import dev.synapsehub.core.claim.Decision;
import dev.synapsehub.core.command.BoardCommand;
import dev.synapsehub.core.command.LedgerProgressCommand;
import dev.synapsehub.core.command.LedgerTaskCommand;
import dev.synapsehub.core.command.LedgerTaskUpdateCommand;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.event.LedgerProgressEvent;
import dev.synapsehub.core.event.LedgerTaskEvent;
import dev.synapsehub.core.reply.BoardTaskReply;
import dev.synapsehub.core.reply.ProgressNoteReply;
import dev.synapsehub.core.reply.Refusal;
import dev.synapsehub.core.reply.Reply;
import dev.synapsehub.core.state.StateImage;
import dev.synapsehub.core.undo.UndoLog;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The shared task board: tasks with dependencies, status and versions, and bounded progress
 * notes (wire contract §§5.11–5.14). {@link #decide} validates without changing anything;
 * {@link #apply} is the only mutation, live and on replay. Not thread-safe: one writer owns it.
 */
public final class BoardRegistry {
    private final BoardLimits limits;
    private final UndoLog undo;
    private final Map<String, BoardTask> tasks = new HashMap<>();
    /**
     * The tasks not done or cancelled that name a suggested owner, kept with every change: the
     * dark-seat check reads them every 5 s on the writer, which then copies only these instead of
     * sorting every task and copying every note.
     */
    private final Map<String, BoardTask> openSuggested = new HashMap<>();
    private final ProgressLog progress;

    /** A board with the given retention caps, recording its changes in {@code undo}. */
    public BoardRegistry(BoardLimits limits, UndoLog undo) {
        this.limits = limits;
        this.undo = undo;
        this.progress = new ProgressLog(limits, undo);
    }

    /** A board with the given retention caps and an undo log of its own. */
    public BoardRegistry(BoardLimits limits) {
        this(limits, new UndoLog());
    }

    /** A board with the contract's default caps. */
    public BoardRegistry() {
        this(BoardLimits.DEFAULTS);
    }

    /** The caps in force. */
    public BoardLimits limits() {
        return limits;
    }

    // ---------------------------------------------------------------------------------------
    // Decide

    /** Decides a board command at hub time {@code t}; changes nothing. */
    public Decision decide(BoardCommand command, double t) {
        if (command instanceof LedgerTaskCommand c) {
            return decideDeclare(c, t);
        } else if (command instanceof LedgerTaskUpdateCommand u) {
            return decideUpdate(u, t);
        } else if (command instanceof LedgerProgressCommand p) {
            return decideProgress(p, t);
        }
        throw new IllegalArgumentException("unknown board command " + command.getClass().getName());
    }

    private Decision decideDeclare(LedgerTaskCommand c, double t) {
        String taskId = strip(c.taskId());
        String title = strip(c.title());
        if (taskId.isEmpty()) {
            return denied("", Refusal.TASK_ID_REQUIRED, "Task ID is required.");
        }
        if (title.isEmpty()) {
            return denied(taskId, Refusal.TITLE_REQUIRED, "Task title is required.");
        }
        BoardTask existing = tasks.get(taskId);
        long current = existing == null ? 0 : existing.version();
        if (c.expectedVersion() != null && c.expectedVersion() != current) {
            return versionConflict(taskId, c.expectedVersion(), current);
        }
        String project = strip(c.project());
        if (existing != null && !project.isEmpty() && !existing.project().isEmpty()
                && !existing.project().equals(project)) {
            return denied(taskId, Refusal.PROJECT_CONFLICT, "Board task '" + taskId + "' belongs to project '"
                    + existing.project() + "', not '" + project + "'.");
        }
        List<String> deps = cleanDependencies(taskId, c.dependsOn());
        Optional<List<String>> cycle = cycleThrough(taskId, deps);
        if (cycle.isPresent()) {
            return denied(taskId, Refusal.DEPENDENCY_CYCLE, "Board task '" + taskId
                    + "' would close a dependency cycle: " + String.join(" -> ", cycle.get()) + ".");
        }
        BoardTask task;
        if (existing == null) {
            task = new BoardTask(taskId, title, strip(c.description()), deps, BoardStatus.OPEN,
                    strip(c.suggestedOwner()), project, 1, c.agent(), t, t);
        } else {
            task = new BoardTask(taskId, title, strip(c.description()), deps, existing.status(),
                    strip(c.suggestedOwner()), project.isEmpty() ? existing.project() : project,
                    existing.version() + 1, existing.createdBy(), existing.createdAt(), t);
        }
        return new Decision(new BoardTaskReply(task, existing == null),
                List.of(new LedgerTaskEvent(t, task, blankToNull(c.causalParent()))));
    }

    private Decision decideUpdate(LedgerTaskUpdateCommand u, double t) {
        String taskId = strip(u.taskId());
        if (taskId.isEmpty()) {
            return denied("", Refusal.TASK_ID_REQUIRED, "Task ID is required.");
        }
        BoardTask existing = tasks.get(taskId);
        if (existing == null) {
            return denied(taskId, Refusal.NOT_FOUND, "Task '" + taskId + "' is not on the board.");
        }
        if (u.expectedVersion() != null && u.expectedVersion() != existing.version()) {
            return versionConflict(taskId, u.expectedVersion(), existing.version());
        }
        BoardStatus status = existing.status();
        if (!PythonWhitespace.isBlank(u.status())) {
            Optional<BoardStatus> parsed = BoardStatus.fromWire(u.status());
            if (parsed.isEmpty()) {
                return denied(taskId, Refusal.UNKNOWN_STATUS, "Unknown ledger status '" + PythonWhitespace.strip(u.status()) + "'.");
            }
            status = parsed.get();
        }
        BoardTask task = new BoardTask(taskId, existing.title(), existing.description(), existing.dependsOn(),
                status,
                u.suggestedOwner() == null ? existing.suggestedOwner() : PythonWhitespace.strip(u.suggestedOwner()),
                u.project() == null ? existing.project() : PythonWhitespace.strip(u.project()),
                existing.version() + 1, existing.createdBy(), existing.createdAt(), t);
        return new Decision(new BoardTaskReply(task, false),
                List.of(new LedgerTaskEvent(t, task, blankToNull(u.causalParent()))));
    }

    private Decision decideProgress(LedgerProgressCommand p, double t) {
        Optional<NoteKind> kind = NoteKind.fromWire(p.kind());
        String taskId = strip(p.taskId());
        if (kind.isEmpty()) {
            return denied(taskId, Refusal.UNKNOWN_KIND, "Unknown progress kind '" + PythonWhitespace.strip(p.kind())
                    + "'; use note, blocked, assessment, usage or approval.");
        }
        ProgressNote note = new ProgressNote(taskId, p.agent(), kind.get(), p.text() == null ? "" : p.text(), t);
        return new Decision(new ProgressNoteReply(note), List.of(new LedgerProgressEvent(t, note)));
    }

    /** Trimmed dependencies without blanks, self-references and duplicates, in first-seen order. */
    static List<String> cleanDependencies(String taskId, List<String> raw) {
        LinkedHashSet<String> deps = new LinkedHashSet<>();
        for (String d : raw) {
            String s = strip(d);
            if (!s.isEmpty() && !s.equals(taskId)) {
                deps.add(s);
            }
        }
        return List.copyOf(deps);
    }

    /**
     * The path back to {@code taskId} if giving it {@code deps} closes a cycle through existing
     * tasks. Unknown ids end a walk: they cannot close a cycle.
     */
    private Optional<List<String>> cycleThrough(String taskId, List<String> deps) {
        Map<String, String> parent = new HashMap<>();
        Set<String> seen = new HashSet<>();
        Deque<String> stack = new ArrayDeque<>();
        for (String d : deps) {
            if (seen.add(d)) {
                parent.put(d, taskId);
                stack.push(d);
            }
        }
        while (!stack.isEmpty()) {
            String id = stack.pop();
            if (id.equals(taskId)) {
                List<String> path = new ArrayList<>();
                String step = parent.get(id);
                path.add(taskId);
                while (!step.equals(taskId)) {
                    path.add(0, step);
                    step = parent.get(step);
                }
                path.add(0, taskId);
                return Optional.of(path);
            }
            BoardTask task = tasks.get(id);
            if (task == null) {
                continue;
            }
            for (String next : task.dependsOn()) {
                if (seen.add(next)) {
                    parent.put(next, id);
                    stack.push(next);
                }
            }
        }
        return Optional.empty();
    }

    private static Decision versionConflict(String taskId, long expected, long current) {
        return denied(taskId, Refusal.VERSION_CONFLICT, "Board task '" + taskId + "' version conflict: expected "
                + expected + ", current " + current + ".");
    }

    private static Decision denied(String taskId, Refusal refusal, String message) {
        return new Decision(new Reply.Denied(taskId, refusal, message), List.of());
    }

    private static String strip(String s) {
        return s == null ? "" : PythonWhitespace.strip(s);
    }

    private static String blankToNull(String s) {
        return PythonWhitespace.isBlank(s) ? null : s;
    }

    // ---------------------------------------------------------------------------------------
    // Apply

    /** Applies one event: the only way the board changes. Events of other families are ignored. */
    public void apply(CoordinationEvent event) {
        if (event instanceof LedgerTaskEvent e) {
            BoardTask task = e.task();
            BoardTask previous = tasks.put(task.taskId(), task);
            indexOpenSuggested(task);
            undo.record(() -> {
                if (previous == null) {
                    tasks.remove(task.taskId());
                    openSuggested.remove(task.taskId());
                } else {
                    tasks.put(previous.taskId(), previous);
                    indexOpenSuggested(previous);
                }
            });
        } else if (event instanceof LedgerProgressEvent e) {
            progress.append(e.note());
        }
    }

    /** Every task (by id) and the retained notes (oldest first), as data. */
    public StateImage.Board image() {
        List<BoardTask> sorted = new ArrayList<>(tasks.values());
        sorted.sort(Comparator.comparing(BoardTask::taskId));
        return new StateImage.Board(sorted, progress.notes());
    }

    /** Loads an image into this empty board; the note caps in force are re-applied (INV-RR-2). */
    public void restore(StateImage.Board image) {
        if (!tasks.isEmpty() || progress.size() > 0) {
            throw new IllegalStateException("restore needs an empty board");
        }
        for (BoardTask task : image.tasks()) {
            tasks.put(task.taskId(), task);
            indexOpenSuggested(task);
        }
        for (ProgressNote note : image.notes()) {
            progress.append(note);
        }
    }

    // ---------------------------------------------------------------------------------------
    // Reads

    /** The board: tasks sorted by id, ready ids, retained notes in insertion order. */
    public BoardSnapshot snapshot() {
        return BoardSnapshot.of(tasks.values(), tasks::get, progress.notes()); // the map it has, not a copy
    }

    /**
     * Every task, unsorted: one pass copying references (tasks are immutable), for a reader that
     * sorts them and works out {@code ready} on its own thread ({@link BoardSnapshot#of}), so
     * that the writer does not spend a sort of the whole board on it.
     */
    public List<BoardTask> tasksUnsorted() {
        return new ArrayList<>(tasks.values());
    }

    /**
     * The tasks not done or cancelled whose suggested owner is not blank, unsorted: a copy of an
     * index kept with every change, so a periodic reader costs the writer only these.
     */
    public List<BoardTask> openSuggested() {
        return new ArrayList<>(openSuggested.values());
    }

    private void indexOpenSuggested(BoardTask task) {
        if (!task.suggestedOwner().isBlank() && !task.status().terminal()) {
            openSuggested.put(task.taskId(), task);
        } else {
            openSuggested.remove(task.taskId());
        }
    }

    /** The task with that id, if declared. */
    public Optional<BoardTask> task(String taskId) {
        return Optional.ofNullable(tasks.get(taskId));
    }

    /** Number of tasks. */
    public int taskCount() {
        return tasks.size();
    }

    /** Retained notes in insertion order. */
    public List<ProgressNote> notes() {
        return progress.notes();
    }

    /** Retained notes by {@code author}. */
    public int noteCountByAuthor(String author) {
        return progress.countByAuthor(author);
    }

    /** Retained notes on {@code taskId} ("" for board-wide notes). */
    public int noteCountByTask(String taskId) {
        return progress.countByTask(taskId);
    }
}
