package dev.synapsehub.core.actor;

import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.journal.InMemoryJournal;
import dev.synapsehub.core.journal.JournalException;
import dev.synapsehub.core.journal.JournaledEvent;

import java.util.List;
import java.util.function.Consumer;

/** An in-memory decision log for actor tests; override {@link #append(List)} to inject failures. */
class TestJournal implements DecisionLog {
    final InMemoryJournal delegate = new InMemoryJournal();

    @Override
    public List<JournaledEvent> append(List<CoordinationEvent> batch) throws JournalException {
        return delegate.append(batch);
    }

    @Override
    public List<JournaledEvent> append(List<CoordinationEvent> batch, List<DecidedMutation> decided)
            throws JournalException {
        return append(batch);
    }

    @Override
    public void replay(Consumer<JournaledEvent> sink) {
        // nothing kept
    }

    @Override
    public long lastSeq() {
        return delegate.lastSeq();
    }

    @Override
    public void close() {
        // nothing to release
    }
}
