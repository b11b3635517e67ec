package dev.synapsehub.core.journal;

import dev.synapsehub.core.event.CoordinationEvent;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

/**
 * The journal of a hub run without {@code --db}: numbers events and keeps nothing, so memory
 * stays bounded. Replay yields nothing.
 */
public final class InMemoryJournal implements Journal {
    private long lastSeq;

    @Override
    public List<JournaledEvent> append(List<CoordinationEvent> batch) {
        List<JournaledEvent> committed = new ArrayList<>(batch.size());
        for (CoordinationEvent event : batch) {
            committed.add(new JournaledEvent(++lastSeq, event));
        }
        return committed;
    }

    @Override
    public void replay(Consumer<JournaledEvent> sink) {
        // Nothing is kept, so there is nothing to replay.
    }

    @Override
    public List<JournaledEvent> readAfter(long afterSeq, int limit, Set<String> kinds) {
        return List.of(); // nothing is kept: no journal, nothing replayed
    }

    @Override
    public long lastSeq() {
        return lastSeq;
    }

    @Override
    public void close() {
        // Nothing to release.
    }
}
