package dev.synapsehub.core.journal;

import java.util.List;
import java.util.Set;

/**
 * A read-only view of the committed journal for historical reads (mailbox replay, ack
 * resolution) away from the writer thread, so a range scan never pauses the hub's only writer.
 * Not thread-safe: its owner confines it to one reader thread and closes it.
 */
public interface JournalReader extends AutoCloseable {
    /** The same contract as {@link Journal#readAfter}: committed events only. */
    List<JournaledEvent> readAfter(long afterSeq, int limit, Set<String> kinds) throws JournalException;

    @Override
    void close() throws JournalException;
}
