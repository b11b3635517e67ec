package dev.synapsehub.mcp;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.core.messaging.AddressMatcher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

/**
 * The MCP face's one connection to its hub, as one agent, kept alive: it registers (with
 * {@code mailbox: true} and the inbox cursor as {@code since_seq}, so directed messages missed
 * while away are replayed), heartbeats, and reconnects with backoff when the connection drops
 * (a hub restart), asking for {@code takeover} of its own stale binding. It stops for good only
 * when the hub refuses the agent itself (close codes 4009, 4010, 4016 and 4003: a name held by
 * someone else, a bad token, a lease), as the reference clients do.
 *
 * <p>{@link #request} sends one frame and waits for the frame that answers it. The wire has
 * no request ids, so requests go one at a time and each names the frame that answers it. A
 * request whose connection drops before the answer is sent again on the next connection: tools
 * that change state send an {@code idem_key} (and chats a {@code client_msg_id}), so the hub
 * applies a resent request at most once. Frames that answer nothing and concern this agent go
 * to the {@link Inbox}.
 */
final class HubLink implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(HubLink.class);
    /** Close codes after which the hub will not take this agent back by retrying (wire contract §2.1). */
    static final Set<Integer> TERMINAL_CLOSE_CODES = Set.of(4003, 4009, 4010, 4016);
    private static final long FIRST_BACKOFF_MS = 250;
    private static final long MAX_BACKOFF_MS = 5_000;

    private final McpSettings settings;
    private final Inbox inbox;
    private final Duration connectTimeout;
    private final ScheduledExecutorService timer;
    private final Semaphore oneAtATime = new Semaphore(1, true);
    private final Object lock = new Object();
    private final AtomicLong acksFailed = new AtomicLong();
    private Connection current;
    private String refusal;
    private String lastProblem = "not connected yet";
    private boolean closed;
    private boolean registeredBefore;
    private int failures;
    private long connections;

    HubLink(McpSettings settings, Inbox inbox) {
        this.settings = settings;
        this.inbox = inbox;
        this.connectTimeout = Duration.ofMillis(Math.max(1_000, Math.min(10_000, settings.requestTimeout().toMillis())));
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "mcp-hub-link");
            t.setDaemon(true);
            return t;
        });
    }

    /** Connects in the background and starts the heartbeat; tool calls wait for the connection. */
    void start() {
        timer.execute(this::connect);
        long beat = settings.heartbeatInterval().toMillis();
        timer.scheduleAtFixedRate(this::heartbeat, beat, beat, TimeUnit.MILLISECONDS);
    }

    /** The agent name. */
    String name() {
        return settings.name();
    }

    /**
     * Sends {@code frame} and returns the first frame {@code isReply} accepts, waiting at most
     * the request timeout in all, reconnections included.
     *
     * @throws ToolFailure {@code hub_unavailable} when no connection could be had in time,
     *     {@code no_answer} when the hub took the frame and did not answer in time
     */
    ObjectNode request(ObjectNode frame, Predicate<ObjectNode> isReply) throws ToolFailure {
        long deadline = System.nanoTime() + settings.requestTimeout().toNanos();
        try {
            if (!oneAtATime.tryAcquire(settings.requestTimeout().toNanos(), TimeUnit.NANOSECONDS)) {
                throw ToolFailure.noAnswer("an earlier call to the hub is still waiting for its answer; try again");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw ToolFailure.noAnswer("interrupted");
        }
        try {
            int attempt = 0;
            while (true) {
                Connection conn = awaitConnection(deadline);
                Pending pending = new Pending(isReply, new CompletableFuture<>());
                conn.pending = pending;
                if (conn.lost) {
                    pending.reply().completeExceptionally(new ConnectionLost("connection closed"));
                } else {
                    if (attempt++ > 0) {
                        LOG.info("sending {} again on the new connection", Frames.type(frame));
                    }
                    frame.put("timestamp", System.currentTimeMillis() / 1000.0);
                    conn.client.sendAsync(frame);
                }
                try {
                    return pending.reply().get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (TimeoutException e) {
                    throw ToolFailure.noAnswer("the hub did not answer " + Frames.type(frame) + " within "
                            + settings.requestTimeout().toMillis() / 1000.0 + " s; it may have been applied."
                            + " Retrying with the same idem_key is safe.");
                } catch (ExecutionException e) {
                    if (!(e.getCause() instanceof ConnectionLost)) {
                        throw ToolFailure.unavailable(String.valueOf(e.getCause().getMessage()));
                    }
                    // the connection dropped before the answer: send again once reconnected
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw ToolFailure.noAnswer("interrupted");
                } finally {
                    conn.pending = null;
                }
            }
        } finally {
            oneAtATime.release();
        }
    }

    /** Acknowledges a directed chat's journal seq (wire {@code ack}, no reply); skipped while disconnected. */
    boolean ack(long seq) {
        Connection conn;
        synchronized (lock) {
            conn = current;
        }
        if (conn == null || conn.lost || conn.protocolVersion < 2) {
            return false;
        }
        sendAck(conn.client, seq); // its outcome is accounted for there
        return true;
    }

    /**
     * Sends the wire ack of {@code seq} on {@code client}. The hub does not answer an ack, so a
     * write that fails is known only here: logged and counted ({@code acks_failed} in {@link #status}).
     *
     * @return completes, as the write did, once its outcome is accounted for
     */
    CompletableFuture<Void> sendAck(HubClient client, long seq) {
        ObjectNode ack = Frames.request(settings.name(), "ack");
        ack.put("seq", seq);
        return client.sendAsyncWithResult(ack).whenComplete((written, failure) -> {
            if (failure != null) {
                acksFailed.incrementAndGet();
                LOG.warn("the ack of seq {} could not be written to the hub: {}; its deferred receipt is lost, and the "
                        + "hub counts the chat read only once a later ack or registration passes it", seq,
                        failure.toString());
            }
        });
    }

    /** What the face knows about its connection, for the {@code status} resource and errors. */
    Map<String, Object> status() {
        synchronized (lock) {
            Map<String, Object> s = new LinkedHashMap<>();
            s.put("agent", settings.name());
            s.put("url", settings.url().toString());
            s.put("connected", current != null);
            s.put("connections", connections);
            s.put("refused", refusal);
            s.put("last_problem", current != null ? null : lastProblem);
            s.put("inbox_cursor", inbox.cursor());
            s.put("cursor_lowerings_failed", inbox.cursorLoweringsFailed());
            s.put("acks_failed", acksFailed.get());
            return s;
        }
    }

    private Connection awaitConnection(long deadline) throws ToolFailure {
        synchronized (lock) {
            while (true) {
                if (closed) {
                    throw ToolFailure.unavailable("the MCP face is shutting down");
                }
                if (refusal != null) {
                    throw ToolFailure.unavailable("the hub refused agent " + settings.name() + ": " + refusal
                            + "; restart the MCP server with another --name or the right token");
                }
                if (current != null) {
                    return current;
                }
                long left = (deadline - System.nanoTime()) / 1_000_000L;
                if (left <= 0) {
                    throw ToolFailure.unavailable("cannot reach the hub at " + settings.url() + " (" + lastProblem
                            + "); reconnecting in the background, try again");
                }
                try {
                    lock.wait(left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw ToolFailure.unavailable("interrupted");
                }
            }
        }
    }

    // ------------------------------------------------------------------ connection lifecycle

    private void connect() {
        boolean takeover;
        synchronized (lock) {
            if (closed || refusal != null || current != null) {
                return;
            }
            takeover = registeredBefore;
        }
        Connection conn = null;
        try {
            conn = new Connection(HubClient.connect(settings.url(), connectTimeout));
            conn.register(takeover);
            Connection registered = conn;
            synchronized (lock) {
                if (closed) {
                    registered.client.close();
                    return;
                }
                current = registered;
                registeredBefore = true;
                failures = 0;
                connections++;
                lock.notifyAll();
            }
            LOG.info("connected to {} as {}", settings.url(), settings.name());
            registered.client.closeFuture().whenComplete((status, t) -> closed(registered, status));
        } catch (Refused r) {
            synchronized (lock) {
                refusal = r.getMessage();
                lock.notifyAll();
            }
            LOG.error("the hub at {} refused agent {}: {}; not reconnecting", settings.url(), settings.name(),
                    r.getMessage());
            closeQuietly(conn);
        } catch (IOException | TimeoutException | RuntimeException e) {
            closeQuietly(conn);
            retryLater(e.getMessage());
        }
    }

    private void closed(Connection conn, HubClient.CloseStatus status) {
        conn.lost = true;
        Pending p = conn.pending;
        if (p != null) {
            p.reply().completeExceptionally(new ConnectionLost("connection closed"));
        }
        timer.execute(conn.client::close);
        synchronized (lock) {
            if (current != conn) {
                return;
            }
            current = null;
            lock.notifyAll();
            if (closed) {
                return;
            }
            if (status != null && TERMINAL_CLOSE_CODES.contains(status.code())) {
                refusal = "closed " + status.code() + " " + status.reason();
                LOG.error("the hub closed the connection of {} with {} {}; not reconnecting", settings.name(),
                        status.code(), status.reason());
                return;
            }
        }
        retryLater("connection closed" + (status == null ? "" : " (" + status.code() + " " + status.reason() + ")"));
    }

    private void retryLater(String problem) {
        long delay;
        synchronized (lock) {
            if (closed) {
                return;
            }
            lastProblem = problem;
            delay = Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS << Math.min(failures, 10));
            failures++;
        }
        LOG.warn("hub {}: {}; reconnecting in {} ms", settings.url(), problem, delay);
        try {
            timer.schedule(this::connect, delay, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException shuttingDown) {
            // closed meanwhile
        }
    }

    private void heartbeat() {
        Connection conn;
        synchronized (lock) {
            conn = current;
        }
        if (conn != null && !conn.lost) {
            ObjectNode hb = Frames.request(settings.name(), "heartbeat");
            hb.put("payload", "alive");
            conn.client.sendAsync(hb);
        }
    }

    private static void closeQuietly(Connection conn) {
        if (conn != null) {
            conn.client.close();
        }
    }

    @Override
    public void close() {
        Connection conn;
        synchronized (lock) {
            closed = true;
            conn = current;
            current = null;
            lock.notifyAll();
        }
        timer.shutdownNow();
        closeQuietly(conn);
    }

    // ------------------------------------------------------------------ one connection

    /** A request waiting for its answer. */
    private record Pending(Predicate<ObjectNode> isReply, CompletableFuture<ObjectNode> reply) {
    }

    /** The connection dropped before the answer came. */
    private static final class ConnectionLost extends Exception {
        ConnectionLost(String message) {
            super(message, null, false, false);
        }
    }

    /** The hub refused this agent (bad token, name held by another socket or lease). */
    private static final class Refused extends Exception {
        Refused(String message) {
            super(message, null, false, false);
        }
    }

    private final class Connection {
        final HubClient client;
        volatile Pending pending;
        volatile boolean lost;
        volatile int protocolVersion = 1;

        Connection(HubClient client) {
            this.client = client;
        }

        /**
         * Registers and proves it with a {@code who_request} answered: on an open hub
         * {@code welcome} comes before the registration is even read, so only an answer to a
         * later frame shows the name was bound.
         */
        void register(boolean takeover) throws Refused, IOException, TimeoutException {
            client.onFrame(this::onFrame);
            // an open hub sends welcome at connect: it may have been queued before the listener was set
            for (ObjectNode early : client.pending()) {
                onFrame(early);
            }
            client.clearPending();
            ObjectNode hb = Frames.request(settings.name(), "heartbeat");
            hb.put("payload", "online");
            if (settings.token() != null) {
                hb.put("token", settings.token());
            }
            hb.put("mailbox", true);
            long since = inbox.registering();
            if (since > 0) {
                hb.put("since_seq", since);
            }
            // the agent reads its inbox when it chooses; nothing wakes it (A7)
            hb.put("wake_capability", "passive");
            if (takeover) {
                hb.put("takeover", true); // our own binding may outlive the connection we lost
            }
            Pending p = new Pending(f -> "who_snapshot".equals(Frames.type(f)), new CompletableFuture<>());
            pending = p;
            client.sendAsync(hb);
            client.sendAsync(Frames.request(settings.name(), "who_request"));
            client.closeFuture().whenComplete((status, t) -> p.reply().completeExceptionally(
                    new IOException("closed during registration" + (status == null ? ""
                            : " (" + status.code() + " " + status.reason() + ")"))));
            try {
                p.reply().get(connectTimeout.toMillis(), TimeUnit.MILLISECONDS);
            } catch (ExecutionException e) {
                if (e.getCause() instanceof Refused r) {
                    throw r;
                }
                throw new IOException(e.getCause().getMessage(), e.getCause());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted");
            } finally {
                pending = null;
            }
        }

        /** On the connection's event loop: answer the pending request, or file the frame in the inbox. */
        void onFrame(ObjectNode f) {
            String type = Frames.type(f);
            if ("welcome".equals(type)) {
                protocolVersion = f.path("protocol_version").canConvertToInt() ? f.path("protocol_version").asInt() : 1;
                return;
            }
            Pending p = pending;
            if (("auth_denied".equals(type) || "name_conflict".equals(type)) && p != null) {
                p.reply().completeExceptionally(new Refused(type + ": " + f.path("payload").asText()));
                return;
            }
            if (p != null && p.isReply().test(f)) {
                p.reply().complete(f);
                return;
            }
            offerToInbox(f, type);
        }
    }

    /** Frames that answer no request but concern this agent. */
    private void offerToInbox(ObjectNode f, String type) {
        String me = settings.name();
        switch (type) {
            case "chat" -> {
                String target = f.path("target").isTextual() ? f.path("target").textValue() : null;
                if (me.equals(f.path("sender").asText()) || f.hasNonNull("channel")
                        || !AddressMatcher.addresses(target, me, List.of())) {
                    return;
                }
                ObjectNode item = f.deepCopy();
                item.put("kind", "chat");
                item.put("directed", AddressMatcher.isDirected(target));
                JsonNode seq = f.get("seq");
                inbox.offer(item, seq != null && seq.canConvertToLong() && seq.isIntegralNumber() ? seq.longValue() : 0);
            }
            case "delivery_receipt", "recipient_liveness_warning", "error" -> inbox.offer(kind(f, type), 0);
            case "handoff_granted" -> {
                if (me.equals(f.path("owner").asText()) && !me.equals(f.path("previous_owner").asText())) {
                    inbox.offer(kind(f, type), 0);
                }
            }
            case "dark_seat_alert" -> {
                if (me.equals(f.path("identity").asText())) {
                    inbox.offer(kind(f, type), 0);
                }
            }
            default -> {
                // broadcasts about others (claims, presence, board) are read through the resources
            }
        }
    }

    private static ObjectNode kind(ObjectNode f, String type) {
        ObjectNode item = f.deepCopy();
        item.put("kind", type);
        return item;
    }
}
