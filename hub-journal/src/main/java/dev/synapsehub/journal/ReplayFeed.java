package dev.synapsehub.journal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * The decoded rows of one replay, batch after batch in seq order, for the thread that applies
 * them. {@link #inline} reads and decodes on that thread; {@link #pipelined} reads on one thread
 * and decodes on a second while the caller applies, so the three stages of a long replay run
 * side by side (each batch goes through the stages in order, and batches are handed on through
 * FIFO queues, so the caller sees exactly the rows and order an inline replay would).
 */
abstract sealed class ReplayFeed implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(ReplayFeed.class.getName());
    static final String QUERY = "SELECT seq, ts, kind, payload FROM events WHERE seq > ? ORDER BY seq";

    /**
     * The next batch, read and decoded; {@link ReplayRows#last} marks the end. A failed read or
     * decode comes as {@link ReplayRows#failure} after the batches before it.
     */
    abstract ReplayRows next() throws InterruptedException;

    /** Gives an applied batch back for the next rows. */
    abstract void recycle(ReplayRows rows) throws InterruptedException;

    /** Stops reading (if not at the end yet) and releases the statement; waits for the stages' threads. */
    @Override
    public abstract void close();

    /** Reads and decodes on the caller's thread, one batch at a time (short tails: no threads to start). */
    static ReplayFeed inline(Connection c, long afterSeq, EventCodec codec, int batchRows) throws SQLException {
        return new Inline(c, afterSeq, codec, batchRows);
    }

    /**
     * Reads on one thread and decodes on another, {@code batches} batches of {@code batchRows} in
     * flight; on the caller's thread alone when the two threads cannot be started (a replay is
     * slower then, never refused for that): logged once, and {@code fellBack} runs to count it.
     */
    static ReplayFeed pipelined(Connection c, long afterSeq, EventCodec codec, int batchRows, int batches,
                                ThreadFactory threads, Runnable fellBack) throws SQLException {
        Pipelined feed = null;
        try {
            feed = new Pipelined(c, afterSeq, codec, batchRows, batches, threads);
            feed.start();
            return feed;
        } catch (OutOfMemoryError | RuntimeException e) { // "unable to create native thread", a refusing factory
            if (feed != null) {
                feed.close();
            }
            // once per replay: the replay is slower, and the cause may be a host out of threads
            LOG.log(System.Logger.Level.WARNING, "journal replay on the caller's thread alone: its read and decode"
                    + " threads could not be started: " + e, e);
            fellBack.run();
            return inline(c, afterSeq, codec, batchRows);
        }
    }

    private static PreparedStatement query(Connection c, long afterSeq) throws SQLException {
        PreparedStatement q = c.prepareStatement(QUERY);
        try {
            q.setLong(1, afterSeq);
        } catch (SQLException e) {
            q.close();
            throw e;
        }
        return q;
    }

    private static final class Inline extends ReplayFeed {
        private final PreparedStatement statement;
        private final ResultSet rs;
        private final EventCodec codec;
        private final ReplayRows rows;

        Inline(Connection c, long afterSeq, EventCodec codec, int batchRows) throws SQLException {
            this.statement = query(c, afterSeq);
            try {
                this.rs = statement.executeQuery();
            } catch (SQLException e) {
                statement.close();
                throw e;
            }
            this.codec = codec;
            this.rows = new ReplayRows(batchRows);
        }

        @Override
        ReplayRows next() {
            try {
                rows.read(rs);
            } catch (SQLException e) {
                rows.fail(e); // the rows read before the failure are still applied
            }
            rows.decode(codec);
            return rows;
        }

        @Override
        void recycle(ReplayRows applied) {
            // the one batch is read again by next()
        }

        @Override
        public void close() {
            try (statement; rs) { // closes rs, then statement, even if rs.close() fails
                // nothing else to release
            } catch (SQLException ignored) {
                // closing a finished read: nothing left to release
            }
        }
    }

    private static final class Pipelined extends ReplayFeed {
        /** How often a stage waiting for rows checks that the stage before it is still alive. */
        private static final long STAGE_CHECK_MILLIS = 200;
        private final BlockingQueue<ReplayRows> free;
        private final BlockingQueue<ReplayRows> toDecode;
        private final BlockingQueue<ReplayRows> toApply;
        private final Thread reader;
        private final Thread decoder;
        private volatile boolean stopped;
        /** Set by each stage once its last batch is handed on: a stage that ended without it died. */
        private volatile boolean readerDone;
        private volatile boolean decoderDone;

        Pipelined(Connection c, long afterSeq, EventCodec codec, int batchRows, int batches, ThreadFactory threads) {
            free = new ArrayBlockingQueue<>(batches);
            toDecode = new ArrayBlockingQueue<>(batches);
            toApply = new ArrayBlockingQueue<>(batches);
            for (int i = 0; i < batches; i++) {
                free.add(new ReplayRows(batchRows));
            }
            reader = threads.newThread(() -> read(c, afterSeq));
            decoder = threads.newThread(() -> decode(codec));
            reader.setName("journal-replay-read");
            decoder.setName("journal-replay-decode");
            reader.setDaemon(true);
            decoder.setDaemon(true);
        }

        /** Starts the decoder, then the reader (which holds the statement once started). */
        void start() {
            decoder.start();
            reader.start();
        }

        /** The reader: owns the statement from prepare to close, so the connection is idle once it ends. */
        private void read(Connection c, long afterSeq) {
            ReplayRows holding = null;
            boolean sentLast = false;
            try (PreparedStatement q = query(c, afterSeq); ResultSet rs = q.executeQuery()) {
                while (!sentLast) {
                    holding = free.take();
                    if (stopped) {
                        return;
                    }
                    holding.read(rs);
                    sentLast = holding.last; // read before the hand-over: the batch is not ours after it
                    ReplayRows sent = holding;
                    holding = null;
                    toDecode.put(sent);
                }
                readerDone = true;
            } catch (InterruptedException e) {
                // close() stops the reader: nobody takes the rows any more
            } catch (Throwable e) {
                if (!sentLast) { // a failure to close a finished read loses nothing
                    pass(holding, e);
                }
            }
        }

        /**
         * Hands a failure on, in the batch being read (after the rows read before it) or else in a
         * batch of no rows, so the caller sees it after the rows before it.
         */
        private void pass(ReplayRows holding, Throwable e) {
            try {
                ReplayRows carrier = holding;
                if (carrier == null) {
                    carrier = free.take();
                    carrier.size = 0;
                }
                carrier.fail(e);
                toDecode.put(carrier);
                readerDone = true;
            } catch (InterruptedException stop) {
                // close() stops the reader
            }
        }

        private void decode(EventCodec codec) {
            try {
                boolean last = false;
                while (!last) {
                    ReplayRows rows = take(toDecode, reader, () -> readerDone);
                    try {
                        rows.decode(codec); // also the rows before a failed read
                    } catch (Throwable e) {
                        rows.size = 0;
                        rows.fail(e);
                    }
                    last = rows.last; // read before the hand-over: the batch is not ours after it
                    toApply.put(rows);
                }
                decoderDone = true;
            } catch (InterruptedException e) {
                // close() stops the decoder
            }
        }

        @Override
        ReplayRows next() throws InterruptedException {
            return take(toApply, decoder, () -> decoderDone);
        }

        /**
         * The next batch from {@code upstream}'s queue; if that stage's thread ended without handing
         * on its last batch (an Error outside its catch, a thread killed by its factory), a batch
         * that ends the replay with that failure instead of waiting for rows that never come.
         */
        private static ReplayRows take(BlockingQueue<ReplayRows> queue, Thread upstream, BooleanSupplier done)
                throws InterruptedException {
            while (true) {
                ReplayRows rows = queue.poll(STAGE_CHECK_MILLIS, TimeUnit.MILLISECONDS);
                if (rows != null) {
                    return rows;
                }
                if (!upstream.isAlive() && !done.getAsBoolean()) {
                    rows = queue.poll(); // handed on just before it ended
                    if (rows != null) {
                        return rows;
                    }
                    ReplayRows failed = new ReplayRows(0);
                    failed.fail(new IllegalStateException(upstream.getName() + " ended without handing on all its rows"));
                    return failed;
                }
            }
        }

        @Override
        void recycle(ReplayRows applied) throws InterruptedException {
            free.put(applied);
        }

        @Override
        public void close() {
            stopped = true;
            reader.interrupt();
            decoder.interrupt();
            boolean interrupted = false;
            for (Thread t : new Thread[] {reader, decoder}) {
                while (t.isAlive()) {
                    try {
                        t.join();
                    } catch (InterruptedException e) {
                        interrupted = true;
                    }
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
