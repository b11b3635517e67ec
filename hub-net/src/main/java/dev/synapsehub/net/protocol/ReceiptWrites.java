package dev.synapsehub.net.protocol;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;

/**
 * The outcomes of one batch of receipt frames written to a socket (§8.5): which reached it, to
 * be settled, and which did not, to stay owed. Outcomes may arrive on any thread.
 */
final class ReceiptWrites {
    private final List<String> written = new ArrayList<>();
    private final LinkedHashMap<String, String> unwritten = new LinkedHashMap<>();
    private int waiting;

    /** A batch of {@code size} frames, none written yet. */
    ReceiptWrites(int size) {
        this.waiting = size;
    }

    /** The outcome of the frame {@code id} ({@code text}); true when it was the batch's last. */
    synchronized boolean done(String id, String text, boolean reachedSocket) {
        if (reachedSocket) {
            written.add(id);
        } else {
            unwritten.put(id, text);
        }
        return --waiting == 0;
    }

    /** The ids written to the socket, in the order their outcomes came. */
    synchronized List<String> written() {
        return List.copyOf(written);
    }

    /** The frames that did not reach the socket (id to text), in the order their outcomes came. */
    synchronized LinkedHashMap<String, String> unwritten() {
        return new LinkedHashMap<>(unwritten);
    }
}
