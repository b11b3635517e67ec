package dev.synapsehub.spec.model;

import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.journal.Journal;
import dev.synapsehub.core.journal.JournaledEvent;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * A list-backed {@link Journal} for the model: keeps every committed event with the sequence
 * number a real journal would give it (consecutive from {@link #lastSeq()} + 1, batch order),
 * so a restart can replay it through {@code CoordinationState.replay}. Unlike the core's
 * {@code InMemoryJournal}, it keeps what it numbers.
 */
final class ListJournal implements Journal {
    private final List<JournaledEvent> committed = new ArrayList<>();

    @Override
    public List<JournaledEvent> append(List<CoordinationEvent> batch) {
        List<JournaledEvent> out = new ArrayList<>(batch.size());
        for (CoordinationEvent event : batch) {
            JournaledEvent journaled = new JournaledEvent(lastSeq() + 1, event);
            committed.add(journaled);
            out.add(journaled);
        }
        return out;
    }

    @Override
    public void replay(Consumer<JournaledEvent> sink) {
        for (JournaledEvent e : committed) {
            sink.accept(e);
        }
    }

    @Override
    public long lastSeq() {
        return committed.isEmpty() ? 0 : committed.get(committed.size() - 1).seq();
    }

    /** Number of events kept. */
    int size() {
        return committed.size();
    }

    @Override
    public void close() {
        // Nothing to release; the list outlives "restarts" on purpose.
    }
}
