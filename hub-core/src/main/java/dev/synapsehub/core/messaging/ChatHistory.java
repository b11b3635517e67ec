package dev.synapsehub.core.messaging;

import dev.synapsehub.core.undo.UndoLog;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.function.Predicate;

/** The bounded retained chat history, oldest dropped first (INV-RR-2). */
final class ChatHistory {
    private final int capacity;
    private final UndoLog undo;
    private final ArrayDeque<ChatRecord> records = new ArrayDeque<>();

    ChatHistory(int capacity, UndoLog undo) {
        this.capacity = capacity;
        this.undo = undo;
    }

    void append(ChatRecord record) {
        records.addLast(record);
        undo.record(records::removeLast);
        while (records.size() > capacity) {
            ChatRecord dropped = records.removeFirst();
            undo.record(() -> records.addFirst(dropped));
        }
    }

    /** The last {@code max(1, limit)} visible records, or all when {@code limit} is null. */
    List<ChatRecord> last(Integer limit, Predicate<ChatRecord> visible) {
        List<ChatRecord> out = new ArrayList<>();
        int want = limit == null ? Integer.MAX_VALUE : Math.max(1, limit);
        Iterator<ChatRecord> it = records.descendingIterator();
        while (it.hasNext() && out.size() < want) {
            ChatRecord r = it.next();
            if (visible.test(r)) {
                out.add(r);
            }
        }
        java.util.Collections.reverse(out);
        return out;
    }

    /** Visible records with {@code msgId > since}, in order. */
    List<ChatRecord> since(long since, Predicate<ChatRecord> visible) {
        List<ChatRecord> out = new ArrayList<>();
        Iterator<ChatRecord> it = records.descendingIterator();
        while (it.hasNext()) {
            ChatRecord r = it.next();
            if (r.msgId() <= since) {
                break;
            }
            if (visible.test(r)) {
                out.add(r);
            }
        }
        java.util.Collections.reverse(out);
        return out;
    }

    int size() {
        return records.size();
    }

    List<ChatRecord> all() {
        return List.copyOf(records);
    }
}
