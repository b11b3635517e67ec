package dev.synapsehub.core.board;

import dev.synapsehub.core.undo.UndoLog;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;

/**
 * Retained progress notes with the three retention caps (per author, per task, total), each
 * dropping the oldest matching note, and a bound on their text together ({@link #MAX_CHARS},
 * oldest dropped first, the newest kept): a note may be as large as a frame, so 5,000 of them
 * could otherwise hold 5 GB. Every change is O(1) and recorded for undo.
 */
final class ProgressLog {
    /** Characters all retained notes' texts may take together (64 Mi, as chat histories). */
    static final long MAX_CHARS = 64L * 1024 * 1024;

    private final BoardLimits limits;
    private final long maxChars;
    private long chars;
    private final UndoLog undo;
    private final LinkedHashMap<Long, ProgressNote> notes = new LinkedHashMap<>();
    private final Map<String, LinkedHashSet<Long>> byAuthor = new HashMap<>();
    private final Map<String, LinkedHashSet<Long>> byTask = new HashMap<>();
    private long counter;

    ProgressLog(BoardLimits limits, UndoLog undo) {
        this(limits, MAX_CHARS, undo);
    }

    ProgressLog(BoardLimits limits, long maxChars, UndoLog undo) {
        this.limits = limits;
        this.maxChars = Math.max(0, maxChars);
        this.undo = undo;
    }

    void append(ProgressNote note) {
        long id = ++counter;
        undo.record(() -> counter--);
        insert(id, note);
        undo.record(() -> remove(id));
        trim(byAuthor.get(note.author()), limits.maxNotesPerAuthor());
        trim(byTask.get(note.taskId()), limits.maxNotesPerTask());
        while (notes.size() > limits.maxNotes() || (chars > maxChars && notes.size() > 1)) {
            drop(notes.keySet().iterator().next());
        }
    }

    /** Characters the retained notes' texts take together. */
    long chars() {
        return chars;
    }

    private void trim(LinkedHashSet<Long> ids, int cap) {
        while (ids != null && ids.size() > cap) {
            drop(ids.iterator().next());
        }
    }

    /** Removes a note for retention, recording its re-insertion at its original position. */
    private void drop(long id) {
        ProgressNote note = notes.get(id);
        remove(id);
        undo.record(() -> reinsert(id, note));
    }

    private void insert(long id, ProgressNote note) {
        notes.put(id, note);
        chars += note.text().length();
        byAuthor.computeIfAbsent(note.author(), k -> new LinkedHashSet<>()).add(id);
        byTask.computeIfAbsent(note.taskId(), k -> new LinkedHashSet<>()).add(id);
    }

    private void remove(long id) {
        ProgressNote note = notes.remove(id);
        if (note == null) {
            return;
        }
        chars -= note.text().length();
        removeFrom(byAuthor, note.author(), id);
        removeFrom(byTask, note.taskId(), id);
    }

    private static void removeFrom(Map<String, LinkedHashSet<Long>> index, String key, long id) {
        LinkedHashSet<Long> ids = index.get(key);
        if (ids != null) {
            ids.remove(id);
            if (ids.isEmpty()) {
                index.remove(key);
            }
        }
    }

    /** Undo of a drop: ids grow with insertion, so re-sorting by id restores every order. */
    private void reinsert(long id, ProgressNote note) {
        insert(id, note);
        resort(notes);
        resortSet(byAuthor.get(note.author()));
        resortSet(byTask.get(note.taskId()));
    }

    private static void resort(LinkedHashMap<Long, ProgressNote> map) {
        List<Map.Entry<Long, ProgressNote>> entries = new ArrayList<>(map.entrySet());
        entries.sort(Map.Entry.comparingByKey());
        map.clear();
        for (Map.Entry<Long, ProgressNote> e : entries) {
            map.put(e.getKey(), e.getValue());
        }
    }

    private static void resortSet(LinkedHashSet<Long> set) {
        List<Long> ids = new ArrayList<>(set);
        ids.sort(null);
        set.clear();
        set.addAll(ids);
    }

    List<ProgressNote> notes() {
        return List.copyOf(notes.values());
    }

    int size() {
        return notes.size();
    }

    int countByAuthor(String author) {
        LinkedHashSet<Long> ids = byAuthor.get(author);
        return ids == null ? 0 : ids.size();
    }

    int countByTask(String taskId) {
        LinkedHashSet<Long> ids = byTask.get(taskId);
        return ids == null ? 0 : ids.size();
    }
}
