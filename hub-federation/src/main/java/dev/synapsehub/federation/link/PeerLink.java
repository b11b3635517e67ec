package dev.synapsehub.federation.link;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.client.tls.ClientTls;

import io.netty.buffer.ByteBuf;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Iterator;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;

/**
 * A warm connection from this hub to one peer hub, shared by everything that talks to that peer
 * (log pulls, forwarded claims), so two operations never collide on the peer's name binding
 * (contract F9.4). It registers as this hub's id, sends each request with the token, and hands
 * each reply to the oldest request waiting for a reply of that type: a hub answers one
 * connection's frames in order. An {@code error} frame fails the oldest request, unless a frame
 * sent by {@link #sendConfirmed} is in doubt: then it answers that frame; a request
 * unanswered within its bound, or any protocol surprise, closes the connection (so a late reply
 * can never be taken for another's), and the next request reconnects.
 */
public final class PeerLink implements AutoCloseable {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private final String peer;
    private final URI uri;
    private final ClientTls tls;
    private final String localHubId;
    private final String token;
    private final Duration connectTimeout;
    private final ClientIdentity identity;
    private final Deque<Pending> pending = new ArrayDeque<>();
    /**
     * Held while (re)connecting, so two operations needing a connection at once (a poll and a
     * forwarded claim after the peer restarted) open one, not two: the second registration of
     * this hub's id would be refused {@code name_conflict}, and the first, orphaned, would hold
     * the name on the peer. Not the monitor: the event loops take that to dispatch replies.
     */
    private final ReentrantLock connecting = new ReentrantLock();
    private HubClient client;
    /** The client identity's stamp when {@link #client} was opened. */
    private ClientIdentity.InForce clientIdentity;
    private volatile Welcome welcome;
    private volatile long lastRoundTripNanos = -1;
    private boolean closed;
    /** Frames from the peer read into a Jackson tree; only tests read it (a broadcast nothing awaits costs none). */
    private final LongAdder framesParsedToTrees = new LongAdder();

    /**
     * What the peer said when the connection opened: its protocol version and clock skew, and
     * when its server certificate expires (epoch seconds; NaN over {@code ws://}).
     */
    public record Welcome(int protocolVersion, double clockSkewSeconds, double certificateNotAfter) {
        /** Without a known server certificate. */
        public Welcome(int protocolVersion, double clockSkewSeconds) {
            this(protocolVersion, clockSkewSeconds, Double.NaN);
        }
    }

    /**
     * The connection closed (or was replaced) before the request went out: the peer read nothing
     * of it (on a mesh, typically the peer closing a connection whose name binding it refused).
     */
    public static final class NotSent extends IOException {
        NotSent(String message) {
            super(message);
        }
    }

    /**
     * The peer answered an {@code error} (or {@code name_conflict}) frame: it read the request
     * and refused it, unlike a connection that failed or a reply that never came.
     */
    public static final class Answered extends IOException {
        Answered(String message) {
            super(message);
        }
    }

    /**
     * A request waiting for its reply: a tree ({@code decoder} null) or a decoded reply.
     * {@code covers} is an unanswered frame's slot sent just before it: its reply proves that
     * frame read too, and completes the slot.
     */
    private record Pending(String replyType, Predicate<ObjectNode> matches, ReplyDecoder<?> decoder,
                           CompletableFuture<Object> future, Pending covers) {
        void completeDecoded(Object reply) {
            future.complete(reply);
        }

        /** The slot of a frame the peer answers only to refuse it: no reply type matches it. */
        boolean unanswered() {
            return replyType.isEmpty();
        }
    }

    private static Pending unanswered() {
        return new Pending("", reply -> false, null, new CompletableFuture<>(), null);
    }

    /**
     * The request an {@code error} answers: the oldest frame sent by {@link #sendConfirmed} still
     * in doubt, else the oldest request. An older request may still wait on the link (a forwarded
     * claim the owner answers when its service has), so the oldest request is not necessarily the
     * refused one; the frame in doubt is, when its barrier is not answered yet. Should an older
     * request's own error land here, that request runs into its bound instead, which closes the
     * connection and fails what waits on it, retryable.
     */
    private Pending takeRefused() {
        for (Iterator<Pending> it = pending.iterator(); it.hasNext(); ) {
            Pending p = it.next();
            if (p.unanswered()) {
                it.remove();
                return p;
            }
        }
        return pending.pollFirst();
    }

    public PeerLink(String peer, URI uri, ClientTls tls, String localHubId, String token, Duration connectTimeout) {
        this(peer, uri, tls, localHubId, token, connectTimeout, ClientIdentity.NONE);
    }

    /**
     * @param identity checked by its watcher about once a second when {@code tls} presents a client
     *                 certificate: while it does not validate the operation fails and the open
     *                 connection is closed; once it changed, the next operation reconnects
     */
    public PeerLink(String peer, URI uri, ClientTls tls, String localHubId, String token, Duration connectTimeout,
                    ClientIdentity identity) {
        this.identity = tls.clientCertFile() == null ? ClientIdentity.NONE : identity;
        this.peer = peer;
        this.uri = uri;
        this.tls = tls;
        this.localHubId = localHubId;
        this.token = token;
        this.connectTimeout = connectTimeout;
    }

    /** The peer's label. */
    public String peer() {
        return peer;
    }

    /** The peer's URI. */
    public URI uri() {
        return uri;
    }

    /** Seconds from sending the last answered request to its reply (NaN before the first). */
    public double roundTripSeconds() {
        long n = lastRoundTripNanos;
        return n < 0 ? Double.NaN : n / 1e9;
    }

    /** The last connection's welcome facts, or null before the first connection. */
    public Welcome welcome() {
        return welcome;
    }

    /**
     * Sends {@code frame} (its sender and token are set here) and completes with the next reply of
     * {@code replyType} on this connection, or exceptionally: an {@code error} frame, the
     * connection closing, or no reply within {@code timeout}. Blocks only while (re)connecting.
     */
    public CompletableFuture<ObjectNode> request(ObjectNode frame, String replyType, Duration timeout) {
        return request(frame, replyType, reply -> true, timeout);
    }

    /**
     * Like {@link #request(ObjectNode, String, Duration)}; the reply is the oldest of that type
     * that {@code matches} accepts (a forwarded claim's result names its task).
     */
    public CompletableFuture<ObjectNode> request(ObjectNode frame, String replyType, Predicate<ObjectNode> matches,
                                                 Duration timeout) {
        return send(frame, replyType, matches, null, timeout).thenApply(reply -> (ObjectNode) reply);
    }

    /**
     * Like {@link #request(ObjectNode, String, Duration)}, but the reply is decoded by
     * {@code decoder} from the frame's bytes instead of being built into a tree first.
     */
    @SuppressWarnings("unchecked")
    public <T> CompletableFuture<T> request(ObjectNode frame, String replyType, ReplyDecoder<T> decoder, Duration timeout) {
        return send(frame, replyType, reply -> true, decoder, timeout).thenApply(reply -> (T) reply);
    }

    /**
     * Sends {@code frame} (its sender and token are set here), a frame the peer answers only to
     * refuse it ({@code dead_letter_forwarding}), then {@code barrier}, both on one connection
     * under one lock; completes when the barrier's {@code barrierReplyType} came, which proves the
     * peer read {@code frame}. Fails {@link Answered} when the peer answered {@code frame} with an
     * {@code error}; fails otherwise (retryable: the frame may be unread) when the connection
     * closed or no reply came within {@code timeout}. An {@code error} to {@code frame} never
     * fails an older request on the link. Blocks only while (re)connecting.
     */
    public CompletableFuture<Void> sendConfirmed(ObjectNode frame, ObjectNode barrier, String barrierReplyType,
                                                 Duration timeout) {
        Pending read = unanswered();
        stamp(frame);
        CompletableFuture<Object> confirmed = send(read, frame, barrier, barrierReplyType, reply -> true, null, timeout);
        // A send that fails before the slot was queued (no connection: a refused pin, a peer not
        // listening) leaves the slot to nobody; thenCombine waits for both, so without this the
        // failure known at once would surface only as the caller's own timeout.
        confirmed.whenComplete((reply, failure) -> {
            if (failure != null) {
                read.future().completeExceptionally(failure);
            }
        });
        // the barrier's reply completes the slot first, so an error to the frame always wins here
        return read.future().thenCombine(confirmed, (a, b) -> null);
    }

    private void stamp(ObjectNode frame) {
        frame.put("sender", localHubId);
        if (token != null) {
            frame.put("token", token);
        }
    }

    private CompletableFuture<Object> send(ObjectNode frame, String replyType, Predicate<ObjectNode> matches,
                                           ReplyDecoder<?> decoder, Duration timeout) {
        return send(null, null, frame, replyType, matches, decoder, timeout);
    }

    /**
     * Like {@link #request(ObjectNode, String, Predicate, Duration)}, but only over the connection
     * open now under the client identity in force: never (re)connecting, never waiting for a
     * connect another thread runs, so it may be called on an event loop. Null, with nothing sent,
     * when there is no such connection: send it with {@code request}, off the event loop.
     */
    public CompletableFuture<ObjectNode> requestIfConnected(ObjectNode frame, String replyType,
                                                            Predicate<ObjectNode> matches, Duration timeout) {
        HubClient c = connectedNow();
        if (c == null) {
            return null;
        }
        return send(c, null, null, frame, replyType, matches, null, timeout).thenApply(reply -> (ObjectNode) reply);
    }

    /** The connection open now under the identity in force, or null; never blocks. */
    private HubClient connectedNow() {
        if (!connecting.tryLock()) {
            return null; // another thread (re)connects: its result is not known yet
        }
        try {
            ClientIdentity.InForce stamp;
            try {
                stamp = identity.current();
            } catch (IOException invalid) {
                return null; // the blocking path refuses it and drops the connection
            }
            synchronized (this) {
                return !closed && client != null && client.isOpen() && stamp.equals(clientIdentity) ? client : null;
            }
        } finally {
            connecting.unlock();
        }
    }

    /** Sends {@code first} (when not null, with its slot {@code firstRead}) and then {@code frame}, on one connection. */
    private CompletableFuture<Object> send(Pending firstRead, ObjectNode first, ObjectNode frame, String replyType,
                                           Predicate<ObjectNode> matches, ReplyDecoder<?> decoder, Duration timeout) {
        HubClient c;
        try {
            c = open();
        } catch (IOException | TimeoutException | RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        return send(c, firstRead, first, frame, replyType, matches, decoder, timeout);
    }

    /** {@link #send(Pending, ObjectNode, ObjectNode, String, Predicate, ReplyDecoder, Duration)} on {@code c}. */
    private CompletableFuture<Object> send(HubClient c, Pending firstRead, ObjectNode first, ObjectNode frame,
                                           String replyType, Predicate<ObjectNode> matches, ReplyDecoder<?> decoder,
                                           Duration timeout) {
        CompletableFuture<Object> future = new CompletableFuture<>();
        stamp(frame);
        synchronized (this) {
            if (client != c || !c.isOpen()) {
                future.completeExceptionally(new NotSent("connection to " + uri + " closed"));
                return future;
            }
            if (first != null) {
                pending.addLast(firstRead);
                c.sendAsync(first);
            }
            pending.addLast(new Pending(replyType, matches, decoder, future, firstRead));
            c.sendAsync(frame); // under the lock: the peer sees requests in queue order
        }
        ScheduledFuture<?> bound;
        try {
            bound = c.eventLoop().schedule(() -> {
                if (!future.isDone()) {
                    drop(c, new TimeoutException("no " + replyType + " from " + peer + " within " + timeout));
                }
            }, timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException loopStopped) {
            // a drop() since the send shut the connection's loop down; it failed every pending future,
            // this one included (and should it not have, it fails here: nothing would ever answer it;
            // not NotSent: the frame may have gone out)
            future.completeExceptionally(new IOException("connection to " + uri + " closed"));
            return future;
        }
        // A pending bound holds the future, and so its reply: a page of a catch-up kept for the
        // whole bound (10 s) was most of the follower's heap (docs/benchmarks.md).
        future.whenComplete((reply, failure) -> bound.cancel(false));
        long sent = System.nanoTime();
        future.thenRun(() -> lastRoundTripNanos = System.nanoTime() - sent); // status: the last answered request
        return future;
    }

    private HubClient open() throws IOException, TimeoutException {
        connecting.lock();
        try {
            return openLocked();
        } finally {
            connecting.unlock();
        }
    }

    private HubClient openLocked() throws IOException, TimeoutException {
        ClientIdentity.InForce stamp;
        HubClient stale;
        try {
            stamp = identity.current();
        } catch (IOException invalid) {
            // no operation goes on under an identity the operator has changed into an invalid one
            synchronized (this) {
                stale = client;
            }
            if (stale != null) {
                drop(stale, invalid);
            }
            throw invalid;
        }
        synchronized (this) {
            if (closed) {
                throw new IOException("link to " + peer + " is closed");
            }
            if (client != null && client.isOpen() && stamp.equals(clientIdentity)) {
                return client;
            }
            stale = client != null && client.isOpen() ? client : null;
        }
        if (stale != null) {
            drop(stale, new IOException("the multi-hub client identity changed; reconnecting to " + peer));
        }
        // UTF-8 is checked in receive(); the client certificate presented is the one validated, as read then
        HubClient c = HubClient.connect(uri, connectTimeout, tls, false, stamp.material());
        try {
            ObjectNode first = c.frame(localHubId, "heartbeat");
            first.put("payload", "online");
            if (token != null) {
                first.put("token", token);
            }
            c.send(first);
            ObjectNode w = c.awaitWhileOpen(f -> "welcome".equals(f.path("type").asText())
                    || "auth_denied".equals(f.path("type").asText()), connectTimeout);
            if (!"welcome".equals(w.path("type").asText())) {
                throw new IOException(peer + " refused the connection: " + w.path("payload").asText());
            }
            double skew = w.path("timestamp").asDouble(Double.NaN) - System.currentTimeMillis() / 1000.0;
            java.util.List<java.security.cert.X509Certificate> chain = c.serverCertificates();
            double notAfter = chain.isEmpty() ? Double.NaN : chain.get(0).getNotAfter().getTime() / 1000.0;
            welcome = new Welcome(w.has("protocol_version") ? w.path("protocol_version").asInt(1) : 1, skew, notAfter);
        } catch (IOException | TimeoutException | RuntimeException e) {
            c.close();
            throw e;
        }
        Scratch scratch = new Scratch(); // one per connection: only its event loop uses it
        c.onBytes(content -> receive(c, content, scratch));
        c.closeFuture().thenAccept(status -> drop(c, new IOException("connection to " + peer + " closed ("
                + status.code() + " " + status.reason() + ")")));
        synchronized (this) {
            if (closed) {
                c.close();
                throw new IOException("link to " + peer + " is closed");
            }
            client = c;
            clientIdentity = stamp;
        }
        return c;
    }

    /** Frames from the peer read into a Jackson tree so far (for tests). */
    long framesParsedToTrees() {
        return framesParsedToTrees.sum();
    }

    /**
     * One frame from the peer, on the connection's event loop. A reply awaited by a decoder is
     * decoded from the bytes; a frame no request awaits (the peer's broadcasts: the owner sends
     * them to every connection) is only read through; any other frame is parsed into a tree as the
     * client would. A frame that is not JSON, or not well-formed UTF-8, throws, which closes the
     * connection (as the client does).
     */
    private void receive(HubClient from, ByteBuf content, Scratch scratch) {
        int length = content.readableBytes();
        byte[] bytes = scratch.holding(length);
        content.getBytes(content.readerIndex(), bytes, 0, length);
        if (!WellFormedUtf8.check(bytes, length)) { // RFC 6455 §8.1: a text frame that is not UTF-8 fails the connection
            throw new UncheckedIOException(new IOException(peer + " sent a text frame that is not well-formed UTF-8"));
        }
        String first = firstType(bytes, length);
        ReplyDecoder<?> decoder;
        boolean awaited;
        synchronized (this) {
            if (from != client) {
                return;
            }
            Pending p = oldestOfType(first);
            awaited = p != null;
            decoder = p == null ? null : p.decoder();
        }
        try {
            if (decoder != null && completeDecoded(from, decoder, bytes, length, first)) {
                return;
            }
            if (!awaited && first != null && !refusal(first) && unused(from, bytes, length)) {
                return;
            }
            framesParsedToTrees.increment();
            JsonNode node = MAPPER.readTree(bytes, 0, length);
            if (node instanceof ObjectNode object) {
                dispatch(from, object, bytes, length);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Decodes and hands over a reply awaited by {@code decoder}; false if the frame turned out to be another. */
    private boolean completeDecoded(HubClient from, ReplyDecoder<?> decoder, byte[] bytes, int length, String first)
            throws IOException {
        Object reply = decoder.decode(bytes, length);
        @SuppressWarnings({"unchecked", "rawtypes"})
        String type = ((ReplyDecoder) decoder).type(reply);
        if (!first.equals(type)) {
            return false; // a repeated "type" key: the last one counts, as in a tree
        }
        Pending taken;
        Pending covered;
        synchronized (this) {
            if (from != client) {
                return true;
            }
            Pending p = oldestOfType(type);
            if (p == null || p.decoder() != decoder) {
                return false;
            }
            pending.remove(p);
            taken = p;
            covered = p.covers() != null && pending.remove(p.covers()) ? p.covers() : null;
        }
        if (covered != null) {
            covered.future().complete(null);
        }
        taken.completeDecoded(reply);
        return true;
    }

    private static boolean refusal(String type) {
        return "error".equals(type) || "name_conflict".equals(type);
    }

    /**
     * Whether nothing can use the frame: no request awaits the type a tree would read, and it is
     * no refusal. Reads the frame through first, so one the tree would refuse still throws.
     */
    private boolean unused(HubClient from, byte[] bytes, int length) throws IOException {
        String type = lastType(MAPPER.getFactory(), bytes, length);
        if (type == null || refusal(type)) {
            return false;
        }
        synchronized (this) {
            // Checked under the lock that send() holds while it queues a request and then writes
            // it: a request not queued yet was not sent yet, so this frame, already received,
            // cannot be its reply.
            return from != client || oldestOfType(type) == null;
        }
    }

    /**
     * The type a tree of the frame would read (the last top-level {@code type}: in a tree a
     * repeated key keeps its last value) when it is a string, having read the whole top-level
     * object exactly as {@code json}'s {@link ObjectMapper#readTree} would: throws where it throws
     * (malformed JSON, a stream read constraint), ignores what it ignores (anything after the
     * object). Null when the tree must decide: not an object, no string type, or a frame long
     * enough to hold a string over the length limit, which only a tree, materialising the
     * string, checks (a string has no more chars than bytes).
     */
    static String lastType(JsonFactory json, byte[] bytes, int length) throws IOException {
        if (length > json.streamReadConstraints().getMaxStringLength()) {
            return null;
        }
        try (JsonParser p = json.createParser(bytes, 0, length)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return null;
            }
            String type = null;
            JsonToken token;
            while ((token = p.nextToken()) == JsonToken.FIELD_NAME) {
                boolean isType = "type".equals(p.currentName());
                JsonToken value = p.nextToken();
                if (isType) {
                    type = value == JsonToken.VALUE_STRING ? p.getText() : null;
                }
                p.skipChildren(); // still tokenises (and so checks) everything it skips
            }
            return token == JsonToken.END_OBJECT ? type : null;
        }
    }

    private Pending oldestOfType(String type) {
        if (type == null) {
            return null;
        }
        for (Pending p : pending) {
            if (p.replyType().equals(type)) {
                return p;
            }
        }
        return null;
    }

    /** The first top-level {@code type} string of a JSON object, or null (not found, or not JSON: the tree path decides). */
    private static String firstType(byte[] bytes, int length) {
        try (JsonParser p = MAPPER.getFactory().createParser(bytes, 0, length)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return null;
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                boolean type = "type".equals(p.currentName());
                JsonToken value = p.nextToken();
                if (type) {
                    return value == JsonToken.VALUE_STRING ? p.getText() : null;
                }
                p.skipChildren();
            }
            return null;
        } catch (IOException e) {
            return null;
        }
    }

    private void dispatch(HubClient from, ObjectNode frame, byte[] bytes, int length) throws IOException {
        String type = frame.path("type").asText();
        Pending done = null;
        Pending covered;
        synchronized (this) {
            if (from != client) {
                return;
            }
            if (refusal(type)) {
                Pending oldest = takeRefused();
                if (oldest != null) {
                    oldest.future().completeExceptionally(new Answered(peer + " answered " + type + ": "
                            + frame.path("payload").asText()));
                }
                return;
            }
            for (Iterator<Pending> it = pending.iterator(); it.hasNext(); ) {
                Pending p = it.next();
                if (p.replyType().equals(type) && p.matches().test(frame)) {
                    it.remove();
                    done = p;
                    break;
                }
            }
            covered = done != null && done.covers() != null && pending.remove(done.covers()) ? done.covers() : null;
        }
        if (covered != null) {
            covered.future().complete(null);
        }
        if (done != null) {
            done.completeDecoded(done.decoder() == null ? frame : done.decoder().decode(bytes, length));
        }
    }

    /**
     * The buffer a connection copies each frame into: one frame of a large catch-up is most of a
     * megabyte, and a fresh array per frame is a humongous allocation in G1 that starts a
     * concurrent mark each time (docs/benchmarks.md). Grown to the largest frame seen.
     */
    private static final class Scratch {
        private byte[] bytes = new byte[64 * 1024];

        byte[] holding(int length) {
            if (bytes.length < length) {
                bytes = new byte[Math.max(length, bytes.length * 2)];
            }
            return bytes;
        }
    }

    /** Closes {@code c} (if still current) and fails everything waiting on it. */
    private void drop(HubClient c, Exception why) {
        Deque<Pending> failed;
        synchronized (this) {
            if (client != c) {
                return;
            }
            client = null;
            failed = new ArrayDeque<>(pending);
            pending.clear();
        }
        failed.forEach(p -> p.future().completeExceptionally(why));
        closeInBackground(c::close, uri); // close() waits for the close frame: never on the client's own loop
    }

    /** Runs {@code close} off the caller's thread; a failure is logged, not lost with the future. */
    static void closeInBackground(Runnable close, URI peer) {
        CompletableFuture.runAsync(close).whenComplete((done, failed) -> {
            if (failed != null) {
                org.slf4j.LoggerFactory.getLogger(PeerLink.class).warn("closing the link to {} failed: {}", peer,
                        failed.toString());
            }
        });
    }

    @Override
    public void close() {
        HubClient c;
        synchronized (this) {
            closed = true;
            c = client;
        }
        if (c != null) {
            drop(c, new IOException("link to " + peer + " closed"));
        }
    }
}
