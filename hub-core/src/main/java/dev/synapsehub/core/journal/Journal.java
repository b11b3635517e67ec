package dev.synapsehub.core.journal;

import dev.synapsehub.core.event.CoordinationEvent;

import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

/**
 * Port: the append-only event log. The actor is its only writer; implementations need not be
 * thread-safe for appends.
 */
public interface Journal extends AutoCloseable {

    /**
     * Appends the batch in one transaction, committed at the strongest durability any of its
     * events asks for (INV-JA-4). Either every event is committed or none is. The events are
     * numbered consecutively from {@link #lastSeq()} + 1 in batch order, and a failed append
     * consumes no numbers: the state mirrors this numbering for mailbox seqs.
     *
     * @return the committed events with their sequence numbers, in batch order
     * @throws JournalInDoubtException when the commit failed after the batch was written, so it
     *     may or may not be durable: call {@link #settle} before answering anything about it
     * @throws JournalException when nothing was committed
     */
    List<JournaledEvent> append(List<CoordinationEvent> batch) throws JournalException;

    /**
     * Settles an append that ended in doubt: makes the journal write again (a later commit also
     * makes sure the doubtful batch can never reappear at a restart) and says whether the batch
     * numbered from {@code firstSeq} committed after all.
     *
     * @return true when the batch is in the journal, numbered from {@code firstSeq}
     * @throws JournalException while the journal still cannot write; call again later
     */
    default boolean settle(long firstSeq) throws JournalException {
        throw new JournalException("this journal never leaves an append in doubt");
    }

    /** Streams every stored event in sequence order; unknown kinds are skipped. */
    void replay(Consumer<JournaledEvent> sink) throws JournalException;

    /**
     * A bounded read for mailbox replay and ack resolution: the first {@code limit} stored events
     * with {@code seq > afterSeq} whose kind is in {@code kinds}, in seq order. Same threading
     * rule as {@link #replay}: call it from the thread that appends (the actor, through
     * {@code CoordinationActor.read}). A journal that keeps nothing returns nothing: without a
     * journal nothing is replayed (wire contract §8.3).
     */
    default List<JournaledEvent> readAfter(long afterSeq, int limit, Set<String> kinds) throws JournalException {
        return List.of();
    }

    /**
     * Rows the start-up replay skipped because they could not be applied (corrupt payloads),
     * including those a loaded state snapshot was built past; 0 for a journal that keeps
     * nothing. What {@code /health} reports as {@code journal_corrupt_rows}. Safe from any thread.
     */
    default long corruptRows() {
        return 0;
    }

    /**
     * Replays that ran on the caller's thread alone because their read and decode threads could
     * not be started (each is slower, and logged once); 0 for a journal that replays on one
     * thread anyway. Safe from any thread.
     */
    default long replayThreadFallbacks() {
        return 0;
    }

    /**
     * The highest epoch the last replay read from claim rows it skipped as corrupt, 0 when none:
     * those epochs were issued, so the replayed state raises its epoch counter to this floor
     * rather than issue one of them again (INV-EF-1). 0 for a journal that keeps nothing.
     */
    default long replayEpochFloor() {
        return 0;
    }

    /** The seq of the first row counted by {@link #corruptRows()}, 0 when there is none. Any thread. */
    default long firstCorruptSeq() {
        return 0;
    }

    /**
     * Opens a reader of committed events for another thread, or returns null when this journal
     * has none (its historical reads then go through the writer, {@link #readAfter}).
     */
    default JournalReader openReader() throws JournalException {
        return null;
    }

    /** The highest committed sequence number, 0 for an empty journal. */
    long lastSeq();

    /** Closes the journal; the caller guarantees no append is in flight (INV-JA-3). */
    @Override
    void close() throws JournalException;
}
