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

import java.util.ArrayList;
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
    /** Rows one range read returns at most (the contract's replay window). */
    static final int PAGE = 1000;

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
        return run(source -> read(source, afterSeq, limit, kinds));
    }

    /**
     * The committed events of {@code kinds} stored at {@code seqs} (ascending), in seq order; seqs
     * with no such event are skipped. Read in pages of at most {@code PAGE} rows, each starting at
     * the next seq not yet found, so seqs far apart cost a short read each.
     */
    public CompletableFuture<List<JournaledEvent>> readAt(List<Long> seqs, Set<String> kinds) {
        if (seqs.isEmpty()) {
            return CompletableFuture.completedFuture(List.of());
        }
        return run(source -> {
            List<JournaledEvent> out = new ArrayList<>();
            int next = 0;
            while (next < seqs.size()) {
                int limit = Math.min(PAGE, seqs.size() - next);
                List<JournaledEvent> page = read(source, seqs.get(next) - 1, limit, kinds);
                for (JournaledEvent e : page) {
                    while (next < seqs.size() && seqs.get(next) < e.seq()) {
                        next++; // not stored as one of kinds
                    }
                    if (next < seqs.size() && seqs.get(next) == e.seq()) {
                        out.add(e);
                        next++;
                    }
                }
                if (page.size() < limit) {
                    break; // the journal's end: no later seq is stored
                }
                long last = page.get(page.size() - 1).seq();
                while (next < seqs.size() && seqs.get(next) <= last) {
                    next++;
                }
            }
            return out;
        });
    }

    /** Runs {@code read} on the reader thread, or on the writer when the journal offers no reader. */
    private <T> CompletableFuture<T> run(java.util.function.Function<RangeRead, T> read) {
        if (journal == null) {
            return CompletableFuture.completedFuture(read.apply((afterSeq, limit, kinds) -> List.of()));
        }
        if (reader == null) {
            return actor.read(s -> read.apply(journal::readAfter));
        }
        CompletableFuture<T> result = new CompletableFuture<>();
        try {
            thread.execute(() -> {
                try {
                    result.complete(read.apply(reader::readAfter));
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
