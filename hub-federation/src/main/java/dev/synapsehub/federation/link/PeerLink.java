package dev.synapsehub.federation.link;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.client.tls.ClientTls;

import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Iterator;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;

/**
 * A warm connection from this hub to one peer hub, shared by everything that talks to that peer
 * (log pulls, forwarded claims), so two operations never collide on the peer's name binding
 * (contract F9.4). It registers as this hub's id, sends each request with the token, and hands
 * each reply to the oldest request waiting for a reply of that type: a hub answers one
 * connection's frames in order. An {@code error} frame fails the oldest request; a request
 * unanswered within its bound, or any protocol surprise, closes the connection (so a late reply
 * can never be taken for another's), and the next request reconnects.
 */
public final class PeerLink implements AutoCloseable {
    private final String peer;
    private final URI uri;
    private final ClientTls tls;
    private final String localHubId;
    private final String token;
    private final Duration connectTimeout;
    private final Deque<Pending> pending = new ArrayDeque<>();
    /**
     * Held while (re)connecting, so two operations needing a connection at once (a poll and a
     * forwarded claim after the peer restarted) open one, not two: the second registration of
     * this hub's id would be refused {@code name_conflict}, and the first, orphaned, would hold
     * the name on the peer. Not the monitor: the event loops take that to dispatch replies.
     */
    private final ReentrantLock connecting = new ReentrantLock();
    private HubClient client;
    private volatile Welcome welcome;
    private boolean closed;

    /** What the peer said when the connection opened: its protocol version and clock skew. */
    public record Welcome(int protocolVersion, double clockSkewSeconds) {
    }

    private record Pending(String replyType, Predicate<ObjectNode> matches, CompletableFuture<ObjectNode> future) {
    }

    public PeerLink(String peer, URI uri, ClientTls tls, String localHubId, String token, Duration connectTimeout) {
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
        CompletableFuture<ObjectNode> future = new CompletableFuture<>();
        HubClient c;
        try {
            c = open();
        } catch (IOException | TimeoutException | RuntimeException e) {
            future.completeExceptionally(e);
            return future;
        }
        frame.put("sender", localHubId);
        if (token != null) {
            frame.put("token", token);
        }
        synchronized (this) {
            if (client != c || !c.isOpen()) {
                future.completeExceptionally(new IOException("connection to " + uri + " closed"));
                return future;
            }
            pending.addLast(new Pending(replyType, matches, future));
            c.sendAsync(frame); // under the lock: the peer sees requests in queue order
        }
        c.eventLoop().schedule(() -> {
            if (!future.isDone()) {
                drop(c, new TimeoutException("no " + replyType + " from " + peer + " within " + timeout));
            }
        }, timeout.toMillis(), TimeUnit.MILLISECONDS);
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
        synchronized (this) {
            if (closed) {
                throw new IOException("link to " + peer + " is closed");
            }
            if (client != null && client.isOpen()) {
                return client;
            }
        }
        HubClient c = HubClient.connect(uri, connectTimeout, tls);
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
            welcome = new Welcome(w.has("protocol_version") ? w.path("protocol_version").asInt(1) : 1, skew);
        } catch (IOException | TimeoutException | RuntimeException e) {
            c.close();
            throw e;
        }
        c.onFrame(f -> dispatch(c, f));
        c.closeFuture().thenAccept(status -> drop(c, new IOException("connection to " + peer + " closed ("
                + status.code() + " " + status.reason() + ")")));
        synchronized (this) {
            if (closed) {
                c.close();
                throw new IOException("link to " + peer + " is closed");
            }
            client = c;
        }
        return c;
    }

    private void dispatch(HubClient from, ObjectNode frame) {
        String type = frame.path("type").asText();
        CompletableFuture<ObjectNode> done = null;
        synchronized (this) {
            if (from != client) {
                return;
            }
            if ("error".equals(type) || "name_conflict".equals(type)) {
                Pending oldest = pending.pollFirst();
                if (oldest != null) {
                    oldest.future().completeExceptionally(new IOException(peer + " answered " + type + ": "
                            + frame.path("payload").asText()));
                }
                return;
            }
            for (Iterator<Pending> it = pending.iterator(); it.hasNext(); ) {
                Pending p = it.next();
                if (p.replyType().equals(type) && p.matches().test(frame)) {
                    it.remove();
                    done = p.future();
                    break;
                }
            }
        }
        if (done != null) {
            done.complete(frame);
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
        CompletableFuture.runAsync(c::close); // close() waits for the close frame: never on the client's own loop
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
