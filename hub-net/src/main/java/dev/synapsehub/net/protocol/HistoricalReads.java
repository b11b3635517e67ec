package dev.synapsehub.net.protocol;

import dev.synapsehub.core.actor.ActorRefusedException;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.actor.Outcome;
import dev.synapsehub.core.journal.Journal;
import dev.synapsehub.core.journal.JournalException;
import dev.synapsehub.core.journal.JournalReader;
import dev.synapsehub.core.journal.JournaledEvent;
import io.netty.util.concurrent.DefaultThreadFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Historical journal reads (mailbox replay, ack resolution): range scans of up to a thousand
 * rows, run on a thread of their own over the journal's read-only {@link JournalReader}, so the
 * writer only decides, journals and applies. A journal without a reader is read through the
 * writer instead. A failed read completes with {@link JournalReadException}; a full queue with a
 * {@code busy} refusal.
 */
public final class HistoricalReads implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(HistoricalReads.class);
    /** Reads waiting at most; more are refused busy. */
    static final int QUEUE = 1024;

    private final CoordinationActor actor;
    private final Journal journal;
    private final JournalReader reader;
    private final ThreadPoolExecutor thread;

    private HistoricalReads(CoordinationActor actor, Journal journal, JournalReader reader) {
        this.actor = actor;
        this.journal = journal;
        this.reader = reader;
        this.thread = reader == null ? null : new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS,
                new ArrayBlockingQueue<>(QUEUE), new DefaultThreadFactory("synapse-journal-reader", true));
    }

    /** Reads of {@code journal} (null: none, every read is empty), with a reader thread when it offers one. */
    public static HistoricalReads open(CoordinationActor actor, Journal journal) throws JournalException {
        return new HistoricalReads(actor, journal, journal == null ? null : journal.openReader());
    }

    /** The committed events after {@code afterSeq} of {@code kinds}, at most {@code limit}. */
    public CompletableFuture<List<JournaledEvent>> readAfter(long afterSeq, int limit, Set<String> kinds) {
        if (journal == null) {
            return CompletableFuture.completedFuture(List.of());
        }
        if (reader == null) {
            return actor.read(s -> read(journal::readAfter, afterSeq, limit, kinds));
        }
        CompletableFuture<List<JournaledEvent>> result = new CompletableFuture<>();
        try {
            thread.execute(() -> {
                try {
                    result.complete(read(reader::readAfter, afterSeq, limit, kinds));
                } catch (RuntimeException e) {
                    result.completeExceptionally(e);
                }
            });
        } catch (RejectedExecutionException full) {
            result.completeExceptionally(new ActorRefusedException(new Outcome.Refused(Outcome.Reason.BUSY,
                    "The hub is busy; retry shortly.")));
        }
        return result;
    }

    /** The range read journals and readers share. */
    @FunctionalInterface
    private interface RangeRead {
        List<JournaledEvent> readAfter(long afterSeq, int limit, Set<String> kinds) throws JournalException;
    }

    private static List<JournaledEvent> read(RangeRead source, long afterSeq, int limit, Set<String> kinds) {
        try {
            return source.readAfter(afterSeq, limit, kinds);
        } catch (JournalException e) {
            throw new JournalReadException(e);
        }
    }

    /** Stops the reader thread (letting a read in progress finish) and closes the reader. */
    @Override
    public void close() {
        if (thread == null) {
            return;
        }
        thread.shutdown();
        try {
            if (thread.awaitTermination(2, TimeUnit.SECONDS)) {
                reader.close();
            } else {
                LOG.warn("a journal read outlived the shutdown; its connection closes with the process");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (JournalException e) {
            LOG.warn("closing the journal reader failed", e);
        }
    }
}
