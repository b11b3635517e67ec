package dev.synapsehub.net;

import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.journal.Journal;
import dev.synapsehub.core.journal.JournalException;
import dev.synapsehub.core.journal.JournalReader;
import dev.synapsehub.core.journal.JournaledEvent;

import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A journal whose reader can be held up: while {@link #hold()} is in force, the reader thread's
 * next read waits (at most ten seconds) until {@link #release()}, so reads pile up behind it.
 */
final class GatedJournal implements Journal {
    private final Journal journal;
    private volatile CountDownLatch gate = new CountDownLatch(0);
    private final CountDownLatch entered = new CountDownLatch(1);
    private volatile boolean holding;

    GatedJournal(Journal journal) {
        this.journal = journal;
    }

    /** The reader's next read waits for {@link #release()}. */
    void hold() {
        gate = new CountDownLatch(1);
        holding = true;
    }

    /** Waits until a read is held at the gate. */
    boolean awaitHeld() throws InterruptedException {
        return entered.await(5, TimeUnit.SECONDS);
    }

    void release() {
        holding = false;
        gate.countDown();
    }

    @Override
    public List<JournaledEvent> append(List<CoordinationEvent> batch) throws JournalException {
        return journal.append(batch);
    }

    @Override
    public boolean settle(long firstSeq) throws JournalException {
        return journal.settle(firstSeq);
    }

    @Override
    public void replay(Consumer<JournaledEvent> sink) throws JournalException {
        journal.replay(sink);
    }

    @Override
    public List<JournaledEvent> readAfter(long afterSeq, int limit, Set<String> kinds) throws JournalException {
        return journal.readAfter(afterSeq, limit, kinds);
    }

    @Override
    public long corruptRows() {
        return journal.corruptRows();
    }

    @Override
    public JournalReader openReader() throws JournalException {
        JournalReader reader = journal.openReader();
        return new JournalReader() {
            @Override
            public List<JournaledEvent> readAfter(long afterSeq, int limit, Set<String> kinds) throws JournalException {
                if (holding) {
                    entered.countDown();
                    try {
                        gate.await(10, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                return reader.readAfter(afterSeq, limit, kinds);
            }

            @Override
            public void close() throws JournalException {
                reader.close();
            }
        };
    }

    @Override
    public long lastSeq() {
        return journal.lastSeq();
    }

    @Override
    public void close() throws JournalException {
        journal.close();
    }
}
