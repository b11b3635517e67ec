package dev.synapsehub.core.messaging;

import dev.synapsehub.core.undo.UndoLog;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.function.Predicate;

/** The bounded retained chat history, oldest dropped first (INV-RR-2). */
final class ChatHistory {
    /**
     * Characters of retained frames at most (about 64 MiB of Latin-1 text): the count bound alone
     * let 10,000 chats of up to a megabyte each hold ten gigabytes (issue 11's hostile run).
     * Deterministic, so replay keeps the same records (INV-RR-2).
     */
    static final long MAX_CHARS = 64L * 1024 * 1024;

    private final int capacity;
    private final long maxChars;
    private final UndoLog undo;
    private final ArrayDeque<ChatRecord> records = new ArrayDeque<>();
    private long chars;

    ChatHistory(int capacity, UndoLog undo) {
        this(capacity, MAX_CHARS, undo);
    }

    ChatHistory(int capacity, long maxChars, UndoLog undo) {
        this.capacity = capacity;
        this.maxChars = maxChars;
        this.undo = undo;
    }

    /** Appends {@code record}, then drops the oldest past either bound (the newest always stays). */
    void append(ChatRecord record) {
        records.addLast(record);
        chars += record.frameJson().length();
        undo.record(() -> {
            records.removeLast();
            chars -= record.frameJson().length();
        });
        while (records.size() > capacity || (chars > maxChars && records.size() > 1)) {
            ChatRecord dropped = records.removeFirst();
            chars -= dropped.frameJson().length();
            undo.record(() -> {
                records.addFirst(dropped);
                chars += dropped.frameJson().length();
            });
        }
    }

    /** Characters of the retained frames. */
    long chars() {
        return chars;
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
