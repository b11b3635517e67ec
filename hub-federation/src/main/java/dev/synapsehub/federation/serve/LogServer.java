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
import java.util.concurrent.CompletionException;

/**
 * Serves {@code multihub_log_request} with {@code multihub_log_snapshot} (contract §11.1): the
 * journal's rows after the requested cursor, every kind, in seq order, to authorised peers only
 * (F5). A refusal looks like "no new events" on the wire and is logged with its reason. Pages
 * are bounded by {@link #MAX_EVENTS} and {@link #MAX_BYTES} whatever {@code limit} asks, so a
 * large backlog is served in resumable steps; {@code next_cursor} is the last seq served.
 */
public final class LogServer {
    /** Most events in one snapshot. */
    public static final int MAX_EVENTS = 5000;
    /** Payload bytes after which a snapshot stops (the first event always goes). */
    public static final long MAX_BYTES = 768 * 1024;
    private static final Logger LOG = LoggerFactory.getLogger(LogServer.class);
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private final HubServices hub;
    private final ServingTrust trust;
    private final SqliteJournal journal;
    private final FederationMetrics metrics;

    /** {@code journal} is null for a hub without {@code --db}: it serves empty snapshots. */
    public LogServer(HubServices hub, ServingTrust trust, SqliteJournal journal, FederationMetrics metrics) {
        this.hub = hub;
        this.trust = trust;
        this.journal = journal;
        this.metrics = metrics;
    }

    /** Answers one request (on the connection's event loop; the read runs on the actor thread). */
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
        hub.actor().read(state -> {
            try {
                return new Page(journal.readStored(afterSeq, events, MAX_BYTES), journal.lastSeq());
            } catch (dev.synapsehub.core.journal.JournalException e) {
                throw new CompletionException(e);
            }
        }).whenCompleteAsync((page, failure) -> {
            if (failure != null) {
                LOG.error("serving the log to peer '{}' after seq {} failed", r.sender(), afterSeq, failure);
                hub.metrics().faults.incrementAndGet();
                reply(r, List.of(), afterSeq, null);
                return;
            }
            metrics.logRequestsServed.incrementAndGet();
            metrics.logEventsServed.addAndGet(page.events().size());
            reply(r, page.events(), page.events().isEmpty() ? afterSeq : page.events().get(page.events().size() - 1).seq(),
                    page.logEnd());
        }, hub.outbox().executor());
    }

    private record Page(List<StoredEvent> events, long logEnd) {
    }

    /**
     * Writes the snapshot straight to UTF-8 bytes with a streaming generator: a page of 5,000
     * events built as a tree, written to a String and encoded again cost more CPU than reading
     * it from the journal (docs/benchmarks.md, "Federation catch-up: a second pass"). The bytes
     * are what the tree would have written: the envelope, then {@code events} (each stored
     * payload as is), {@code next_cursor} and {@code log_end_seq}.
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
            writeEvents(g, events);
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

    /**
     * The page's events, each {@code {seq, ts, kind, payload}}: a stored payload that is one
     * well-formed JSON object is written as it is stored (copied as bytes when all ASCII, as this
     * hub's encoder writes them), anything else (a damaged row) as {@code null}, so its seq still
     * goes, the peer sees no gap, and the rest of the page stays readable.
     */
    static void writeEvents(JsonGenerator g, List<StoredEvent> events) throws IOException {
        for (StoredEvent e : events) {
            g.writeStartObject();
            g.writeNumberField("seq", e.seq());
            g.writeFieldName("ts");
            g.writeRawValue(PythonFloatFormat.format(e.ts()));
            g.writeStringField("kind", e.kind());
            g.writeFieldName("payload");
            byte[] p = e.payloadUtf8();
            Shape shape = p == null ? Shape.NOT_OBJECT : StoredObjectCheck.shape(p);
            String text = shape == Shape.OBJECT ? e.payload() : null;
            if (shape == Shape.ASCII_OBJECT) {
                g.writeRawValue(new AsciiJson(p)); // the stored object, as is
            } else if (text != null
                    && StoredObjectCheck.shape(text.getBytes(StandardCharsets.UTF_8)) != Shape.NOT_OBJECT) {
                // not all ASCII: through the text (ill-formed UTF-8 becomes U+FFFD there, so the
                // frame stays valid UTF-8), checked again as that text's UTF-8
                g.writeRawValue(text);
            } else {
                g.writeNull(); // a damaged row: its seq still goes, so the peer sees no gap
            }
            g.writeEndObject();
        }
    }

    /** A JSON integer ≥ 0, else null (a float, a bool, a string or a negative number is malformed). */
    private static Long nonNegative(JsonNode n) {
        if (n == null || !n.isIntegralNumber() || !n.canConvertToLong() || n.longValue() < 0) {
            return null;
        }
        return n.longValue();
    }
}
