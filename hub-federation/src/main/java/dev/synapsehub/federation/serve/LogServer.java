package dev.synapsehub.federation.serve;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.federation.FederationMetrics;
import dev.synapsehub.federation.serve.StoredObjectCheck.Shape;
import dev.synapsehub.federation.trust.PeerDecision;
import dev.synapsehub.federation.trust.ServingTrust;
import dev.synapsehub.journal.SqliteJournal;
import dev.synapsehub.journal.StoredEvent;
import dev.synapsehub.journal.SqliteJournalReader;
import dev.synapsehub.net.extension.HubServices;
import dev.synapsehub.net.protocol.Request;
import dev.synapsehub.net.wire.PythonFloatFormat;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufOutputStream;
import io.netty.buffer.PooledByteBufAllocator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Serves {@code multihub_log_request} with {@code multihub_log_snapshot} (contract §11.1): the
 * journal's rows after the requested cursor, every kind, in seq order, to authorised peers only
 * (F5). A refusal looks like "no new events" on the wire and is logged with its reason. Pages
 * are bounded by {@link #MAX_EVENTS} and {@link #MAX_BYTES} whatever {@code limit} asks, so a
 * large backlog is served in resumable steps; {@code next_cursor} is the last seq served.
 *
 * <p>Pages are read on a thread of their own through a read-only connection (WAL: committed rows
 * only), not on the writer: a follower catching up a million rows would otherwise hold the writer
 * for a page read at a time, and agents' claims would wait behind each. The reader is opened only
 * with a serving policy (without one nothing is served); where it does not open, pages are read
 * through the writer as before, with a WARN at start.
 */
public final class LogServer implements AutoCloseable {
    /** Most events in one snapshot. */
    public static final int MAX_EVENTS = 5000;
    /** Payload bytes after which a snapshot stops (the first event always goes). */
    public static final long MAX_BYTES = 768 * 1024;
    private static final Logger LOG = LoggerFactory.getLogger(LogServer.class);
    private static final ObjectMapper MAPPER = new ObjectMapper();

    /**
     * Page reads waiting at most (a follower keeps one or two in flight); more are answered at once
     * as an empty snapshot with a null log end and counted, which may reach that peer before the
     * answers to its earlier pulls: its follower then fails the poll (contiguity) and nothing is folded.
     */
    static final int READ_QUEUE = 1024;

    /** Pages read ahead held at most: one per follower catching up at once, beyond that the oldest goes. */
    static final int READ_AHEAD_PAGES = 4;
    /** How long a page read ahead waits for its pull: a catch-up asks within milliseconds. */
    static final java.time.Duration READ_AHEAD_AGE = java.time.Duration.ofSeconds(10);

    private final HubServices hub;
    private final ServingTrust trust;
    private final SqliteJournal journal;
    private final FederationMetrics metrics;
    /** Null: pages are read through the writer (no journal, or no reader opened). */
    private final SqliteJournalReader reader;
    private final ThreadPoolExecutor readThread;
    /** True from a failed read ahead (logged) until one succeeds; on the reader's thread only. */
    private boolean readAheadFailing;
    /** Pages read before their pull came; on the reader's thread only. */
    private final ReadAhead readAhead = new ReadAhead(READ_AHEAD_PAGES, READ_AHEAD_AGE.toNanos(), System::nanoTime);
    private final PeerCursorHolds holds;
    /** How the error answering a pull behind deleted rows begins (our follower tells that failure by it). */
    public static final String COMPACTED = "Log compacted";
    /** Pulls waiting at most for the reader ({@link #READ_QUEUE}, or a test's). */
    private final int readQueue;
    /** True from a pull answered busy (logged) until one is read again; on the outbox thread only. */
    private boolean busy;

    /** {@code journal} is null for a hub without {@code --db}: it serves empty snapshots. */
    public LogServer(HubServices hub, ServingTrust trust, SqliteJournal journal, FederationMetrics metrics) {
        this(hub, trust, journal, metrics, READ_QUEUE);
    }

    /** As the public constructor, with at most {@code readQueue} pulls waiting for the reader. */
    LogServer(HubServices hub, ServingTrust trust, SqliteJournal journal, FederationMetrics metrics, int readQueue) {
        this.hub = hub;
        this.readQueue = readQueue;
        this.trust = trust;
        this.journal = journal;
        this.metrics = metrics;
        this.holds = new PeerCursorHolds(trust::grantedPeers);
        SqliteJournalReader opened = null;
        if (journal != null && trust.configured()) { // without a serving policy every pull is refused unread
            try {
                opened = journal.openReader();
            } catch (dev.synapsehub.core.journal.JournalException e) {
                LOG.warn("peers' log pulls are read through the writer thread: {}", e.getMessage());
            }
        }
        reader = opened;
        readThread = opened == null ? null : new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS,
                new ArrayBlockingQueue<>(readQueue), r -> {
                    Thread t = new Thread(r, "synapse-log-reader");
                    t.setDaemon(true);
                    return t;
                });
    }

    /** Answers one request (on the connection's event loop; the page is read on the reader's thread). */
    public void handle(Request r) {
        Long afterSeq = nonNegative(r.get("after_seq"));
        JsonNode limitNode = r.get("limit");
        Long limit = limitNode == null || limitNode.isNull() ? Long.valueOf(Long.MAX_VALUE) : nonNegative(limitNode);
        PeerDecision decision = trust.decide(r.sender(), r.session().peerCertificateChain(), hub.clock().nowSeconds());
        if (!decision.allowed()) {
            metrics.federationDenied.incrementAndGet();
            LOG.warn("Refused multi-hub log to peer '{}': {}", r.sender(), decision.reason());
            reply(r, List.of(), afterSeq == null ? 0 : afterSeq, null);
            return;
        }
        if (afterSeq == null || limit == null) {
            reply(r, List.of(), 0, null); // malformed: empty at cursor 0 (§11.1)
            return;
        }
        if (journal == null) {
            reply(r, List.of(), afterSeq, null);
            return;
        }
        int events = (int) Math.min(limit, MAX_EVENTS);
        // the connection's later edge answers (an error for its next frame) wait for this one
        hub.outbox().answeredWhen(r.session(), read(afterSeq, events).handleAsync((page, failure) -> {
            Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                    ? failure.getCause() : failure; // through the writer, a read's failure comes wrapped
            if (cause instanceof Compacted gone) {
                holds.behind(r.sender());
                metrics.logRequestsCompacted.incrementAndGet();
                LOG.warn("peer '{}' asked for the log after seq {}, but retention deleted the rows up to seq {}: it cannot"
                        + " catch up from this hub (raise --journal-keep-rows; peers that pull at least once every {} h"
                        + " hold their rows)", r.sender(), afterSeq, gone.through, PeerCursorHolds.WINDOW.toHours());
                hub.outbox().send(r.session(), hub.frames().error(r.sender(), COMPACTED + ": rows after seq " + afterSeq
                        + " through seq " + gone.through + " were deleted by retention and cannot be served",
                        hub.clock().nowSeconds()));
                return null;
            }
            Busy refused = failure instanceof Busy b ? b : null; // read() fails its own future with it: never wrapped
            if (refused != null && refused.closed) { // the hub is stopping: this connection is closing too
                reply(r, List.of(), afterSeq, null);
                return null;
            }
            if (refused != null) {
                metrics.logRequestsBusy.incrementAndGet();
                if (!busy) {
                    busy = true;
                    LOG.warn("peers' log pulls come faster than they are read: {} wait; '{}' and those after it are answered "
                            + "empty until one is read again (synapse_multihub_log_requests_busy_total)", readQueue,
                            r.sender());
                }
                reply(r, List.of(), afterSeq, null);
                return null;
            }
            busy = false;
            if (failure != null) {
                LOG.error("serving the log to peer '{}' after seq {} failed", r.sender(), afterSeq, failure);
                hub.metrics().faults.incrementAndGet();
                reply(r, List.of(), afterSeq, null);
                return null;
            }
            // held only from a pull that can be served (a peer behind deleted rows would pin retention for good), and
            // before the page goes out: the peer's next pull finds it held
            holds.pulled(r.sender(), afterSeq);
            // counted before the page goes out, as the hold: a peer (or a test) reading them on the reply finds them
            metrics.logRequestsServed.incrementAndGet();
            metrics.logEventsServed.addAndGet(page.events().size());
            reply(r, page.events(), page.events().isEmpty() ? afterSeq : page.events().get(page.events().size() - 1).seq(),
                    page.logEnd());
            return null;
        }, hub.outbox().executor()).whenComplete((x, sendFailure) -> {
            // only a failure of the answer itself: the read's own failures were answered above
            if (sendFailure != null) { // encoding or sending the page failed: answered empty at its cursor, as a busy pull
                LOG.error("answering the log pull of peer '{}' after seq {} failed", r.sender(), afterSeq, sendFailure);
                hub.metrics().faults.incrementAndGet();
                try {
                    reply(r, List.of(), afterSeq, null);
                } catch (RuntimeException again) {
                    LOG.error("the empty answer to peer '{}' failed too; its pull runs into its bound", r.sender(), again);
                }
            }
        }));
    }

    private record Page(List<StoredEvent> events, long logEnd) {
        /**
         * {@code logEnd} read after the rows: a commit sets the journal's last seq just after it,
         * so a row read that instant may be past it; the end is never below what is served.
         */
        static Page of(List<StoredEvent> events, long logEnd) {
            return new Page(events, events.isEmpty() ? logEnd : Math.max(logEnd, events.get(events.size() - 1).seq()));
        }
    }

    /** The page after {@code afterSeq}, read on the reader's thread (or, without one, on the writer's). */
    private CompletableFuture<Page> read(long afterSeq, int events) {
        if (reader == null) {
            return hub.actor().read(state -> {
                try {
                    List<StoredEvent> rows = journal.readStored(afterSeq, events, MAX_BYTES);
                    long gone = gapBefore(afterSeq, rows);
                    if (gone > 0) {
                        throw new Compacted(gone);
                    }
                    return Page.of(rows, journal.lastSeq());
                } catch (dev.synapsehub.core.journal.JournalException e) {
                    throw new CompletionException(e);
                }
            });
        }
        CompletableFuture<Page> page = new CompletableFuture<>();
        try {
            readThread.execute(() -> {
                List<StoredEvent> rows = readAhead.take(afterSeq, events);
                try {
                    if (rows != null) {
                        metrics.logPagesServedAhead.incrementAndGet();
                    } else {
                        rows = reader.readStored(afterSeq, events, MAX_BYTES);
                    }
                    long gone = compactedBefore(afterSeq, rows);
                    if (gone > 0) {
                        page.completeExceptionally(new Compacted(gone));
                        return;
                    }
                } catch (dev.synapsehub.core.journal.JournalException | RuntimeException e) {
                    page.completeExceptionally(e);
                    return;
                }
                // decided before the page goes out: its peer's next pull, which may then come at once, is not
                // "another pull waiting" (it is the one read ahead for), and a test can tell which applies
                boolean othersWait = !readThread.getQueue().isEmpty();
                page.complete(Page.of(rows, journal.lastSeq()));
                if (!othersWait) {
                    readNextPage(rows, events); // while this page is encoded, sent and read by the peer
                }
            });
        } catch (RejectedExecutionException full) { // readQueue pulls waiting, or closed
            page.completeExceptionally(new Busy(readThread.isShutdown(), readQueue));
        }
        return page;
    }

    /**
     * Reads the page a follower asks for next, after {@code served}, when the log goes on past
     * it (and, as its caller checks, no other pull waited when it was served: those are not kept
     * waiting for a guess): a catch-up then waits for each page's encoding, sending and
     * parsing but not also for its read (docs/benchmarks.md, "Cold catch-up: the next page read
     * ahead"). Only a page that ends before the log's end as it was before the read is kept: it
     * was cut by its size or its bytes, so a read at the pull would return the same rows. A
     * failed read is counted, logged once until one succeeds, and changes nothing: the pull reads again.
     */
    private void readNextPage(List<StoredEvent> served, int events) {
        if (served.isEmpty() || readThread.isShutdown()) {
            return;
        }
        long tail = served.get(served.size() - 1).seq();
        long end = journal.lastSeq(); // committed before the read starts, so the read sees it
        if (tail >= end) {
            return; // a follower at the end polls again later: nothing to read yet
        }
        try {
            List<StoredEvent> next = reader.readStored(tail, events, MAX_BYTES);
            if (!next.isEmpty() && next.get(next.size() - 1).seq() < end) {
                readAhead.keep(tail, events, next);
                metrics.logPagesReadAhead.incrementAndGet();
            }
            if (readAheadFailing) {
                readAheadFailing = false;
                LOG.info("reading the log ahead works again (after seq {})", tail);
            }
        } catch (dev.synapsehub.core.journal.JournalException | RuntimeException e) {
            metrics.logReadAheadFailures.incrementAndGet();
            if (!readAheadFailing) {
                readAheadFailing = true;
                LOG.warn("reading the log ahead after seq {} failed (pulls read their pages themselves; logged once until"
                        + " it works again, counted in synapse_multihub_log_read_ahead_failures_total): {}", tail,
                        e.toString());
            }
        }
    }

    /**
     * The seq through which retention deleted rows a pull after {@code afterSeq} needs next, or 0
     * when none: seqs are contiguous except where retention deleted a prefix, so a page that does
     * not start right after the cursor tells; an empty one only where the log goes on past it.
     */
    private long compactedBefore(long afterSeq, List<StoredEvent> rows) throws dev.synapsehub.core.journal.JournalException {
        if (!rows.isEmpty()) {
            return gapBefore(afterSeq, rows);
        }
        if (afterSeq >= journal.lastSeq()) {
            return 0;
        }
        long compacted = reader.compactedThrough();
        return afterSeq < compacted ? compacted : 0;
    }

    /** The seq just below a page that does not start right after the cursor (retention deleted up to it), else 0. */
    private static long gapBefore(long afterSeq, List<StoredEvent> rows) {
        return !rows.isEmpty() && rows.get(0).seq() > afterSeq + 1 ? rows.get(0).seq() - 1 : 0;
    }

    /** The rows after a pull's cursor through {@code through} were deleted by retention. */
    private static final class Compacted extends RuntimeException {
        final long through;

        Compacted(long through) {
            super("compacted through seq " + through, null, false, false);
            this.through = through;
        }
    }

    /** What authorised peers still have to pull: registered with the journal's retention ({@link PeerCursorHolds}). */
    public PeerCursorHolds cursorHolds() {
        return holds;
    }

    /** The log reader has {@code waiting} pulls waiting, or ({@code closed}) is stopped. */
    private static final class Busy extends RuntimeException {
        final boolean closed;

        Busy(boolean closed, int waiting) {
            super(closed ? "the log reader is stopped" : "the log reader has " + waiting + " pulls waiting", null,
                    false, false);
            this.closed = closed;
        }
    }

    /**
     * Test only: runs {@code task} on the reader's thread, in turn with the pulls (a test holds the
     * reader with it). A server without a reader (no journal, no serving policy, or a reader that
     * could not be opened) has no such thread: that is an {@link IllegalStateException}.
     */
    void onReaderThread(Runnable task) {
        if (readThread == null) {
            throw new IllegalStateException("no reader thread: this log server reads no journal of its own (no "
                    + "journal, no serving policy, or its reader could not be opened)");
        }
        readThread.execute(task);
    }

    /** Stops the reader's thread (pulls still waiting get no page: their connections are closing) and closes its connection. */
    @Override
    public void close() {
        if (reader == null) {
            return;
        }
        readThread.shutdownNow();
        try {
            if (!readThread.awaitTermination(5, TimeUnit.SECONDS)) {
                LOG.warn("the log reader's thread did not stop within 5 s; closing its connection anyway");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            reader.close();
        } catch (dev.synapsehub.core.journal.JournalException e) {
            LOG.warn("closing the log reader: {}", e.getMessage());
        }
    }

    /**
     * Writes the snapshot straight to UTF-8 bytes: a page of 5,000 events built as a tree, written
     * to a String and encoded again cost more CPU than reading it from the journal
     * (docs/benchmarks.md, "Federation catch-up: a second pass"). The envelope and the page's end go
     * through a streaming generator, the events are copied in by {@link #writeEvents} (the generator
     * is flushed first, so the bytes stay in order). The bytes are what the tree would have written:
     * the envelope, then {@code events} (each stored payload as is), {@code next_cursor} and
     * {@code log_end_seq}.
     */
    private void reply(Request r, List<StoredEvent> events, long nextCursor, Long logEnd) {
        ObjectNode envelope = hub.frames().envelope(r.sender(), "multihub_log_snapshot", "Multi-hub log snapshot",
                hub.clock().nowSeconds());
        // pooled and off the heap: a page is most of a megabyte, a humongous object for G1
        ByteBuf out = PooledByteBufAllocator.DEFAULT.directBuffer(256 + events.size() * 64);
        try (JsonGenerator g = MAPPER.createGenerator((java.io.OutputStream) new ByteBufOutputStream(out))) {
            g.writeStartObject();
            for (Iterator<Map.Entry<String, JsonNode>> it = envelope.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> member = it.next();
                g.writeFieldName(member.getKey());
                g.writeTree(member.getValue());
            }
            g.writeArrayFieldStart("events");
            g.flush();
            writeEvents(out, events);
            g.writeEndArray();
            g.writeNumberField("next_cursor", nextCursor);
            if (logEnd == null) {
                g.writeNullField("log_end_seq");
            } else {
                g.writeNumberField("log_end_seq", logEnd);
            }
            g.writeEndObject();
        } catch (IOException | RuntimeException e) { // a pooled buffer is released on every failure
            out.release();
            throw e instanceof IOException io ? new UncheckedIOException(io) : (RuntimeException) e;
        }
        hub.outbox().sendInOrder(r.session(), out);
    }

    private static final byte[] SEQ = ascii("{\"seq\":");
    private static final byte[] TS = ascii(",\"ts\":");
    private static final byte[] KIND = ascii(",\"kind\":");
    private static final byte[] PAYLOAD = ascii(",\"payload\":");
    private static final byte[] NULL_END = ascii("null}");

    /**
     * The page's events, each {@code {seq, ts, kind, payload}}, comma separated, as Jackson's
     * generator wrote them before (PageEventsBytesTest pins the bytes): a stored payload that is one
     * well-formed JSON object is copied as it is stored when it is well-formed UTF-8 (ASCII or not),
     * anything else (a damaged row) as {@code null}, so its seq still goes, the peer sees no gap, and
     * the rest of the page stays readable. A kind is quoted by Jackson once per distinct kind per page.
     */
    static void writeEvents(ByteBuf out, List<StoredEvent> events) throws IOException {
        Map<String, byte[]> quotedKinds = new java.util.HashMap<>();
        for (int k = 0; k < events.size(); k++) {
            StoredEvent e = events.get(k);
            if (k > 0) {
                out.writeByte(',');
            }
            out.writeBytes(SEQ);
            writeLong(out, e.seq());
            out.writeBytes(TS);
            out.writeCharSequence(PythonFloatFormat.format(e.ts()), StandardCharsets.US_ASCII);
            out.writeBytes(KIND);
            byte[] kind = quotedKinds.get(e.kind());
            if (kind == null) {
                kind = MAPPER.writeValueAsBytes(e.kind()); // the generator's own quoting and escapes
                quotedKinds.put(e.kind(), kind);
            }
            out.writeBytes(kind);
            out.writeBytes(PAYLOAD);
            byte[] p = e.payloadUtf8();
            Shape shape = p == null ? Shape.NOT_OBJECT : StoredObjectCheck.shape(p);
            if (shape == Shape.ASCII_OBJECT || shape == Shape.UTF8_OBJECT) {
                out.writeBytes(p).writeByte('}'); // the stored object, as is
                continue;
            }
            if (shape == Shape.OBJECT) {
                // ill-formed UTF-8: through the text, where it becomes U+FFFD, so the frame stays
                // valid UTF-8; checked again as that text's UTF-8
                byte[] text = e.payload().getBytes(StandardCharsets.UTF_8);
                if (StoredObjectCheck.shape(text) != Shape.NOT_OBJECT) {
                    out.writeBytes(text).writeByte('}');
                    continue;
                }
            }
            out.writeBytes(NULL_END); // a damaged row: its seq still goes, so the peer sees no gap
        }
    }

    /** {@code v} in decimal ASCII, as the generator writes a long (a seq is never negative). */
    private static void writeLong(ByteBuf out, long v) {
        if (v < 0) {
            out.writeCharSequence(Long.toString(v), StandardCharsets.US_ASCII);
            return;
        }
        int digits = 1;
        for (long rest = v; rest >= 10; rest /= 10) {
            digits++;
        }
        out.ensureWritable(digits);
        int at = out.writerIndex();
        for (int i = digits - 1; i >= 0; i--, v /= 10) {
            out.setByte(at + i, '0' + (int) (v % 10));
        }
        out.writerIndex(at + digits);
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    /** A JSON integer ≥ 0, else null (a float, a bool, a string or a negative number is malformed). */
    private static Long nonNegative(JsonNode n) {
        if (n == null || !n.isIntegralNumber() || !n.canConvertToLong() || n.longValue() < 0) {
            return null;
        }
        return n.longValue();
    }
}
