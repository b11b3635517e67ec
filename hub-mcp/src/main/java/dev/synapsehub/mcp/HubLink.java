package dev.synapsehub.mcp;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.core.messaging.AddressMatcher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
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
 * someone else, a bad token or name, a lease; 4013 for an identity pin), during the registration
 * or after it, as the reference clients do.
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
    /** The first pause before a registration's {@code who_request} refused busy is sent again, doubling. */
    private static final long FIRST_WHO_PAUSE_MS = 50;
    private static final long MAX_WHO_PAUSE_MS = 1_000;

    /**
     * A close that refuses the agent itself, whether it ends a registration or a registered
     * connection: a terminal code, or 4013 for an identity pin or binding (4013 also means a hub
     * at capacity, which passes).
     */
    static boolean refusesAgent(HubClient.CloseStatus status) {
        return TERMINAL_CLOSE_CODES.contains(status.code())
                || (status.code() == 4013 && status.reason() != null && status.reason().contains("identity"));
    }
    private static final long MAX_BACKOFF_MS = 5_000;
    /** How long an ack round waits for its fence's answer before it sends another (doubling). */
    private static final long FIRST_FENCE_PAUSE_MS = 250;
    /** The pause after an ack was refused, doubling (the hub's rate limit says: slow down). */
    private static final long FIRST_ACK_PAUSE_MS = 250;
    private static final long MAX_ACK_PAUSE_MS = 2_000;
    /**
     * Fences are {@code resume_request}s with a {@code since} above any message id (they list
     * nothing), unique per fence so that its echo says which one was answered; below 2^53, since
     * a hub may read the number as a double.
     */
    static final long FENCE_BASE = 1L << 52;

    private final McpSettings settings;
    private final Inbox inbox;
    private final Duration connectTimeout;
    private final ScheduledExecutorService timer;
    private final Semaphore oneAtATime = new Semaphore(1, true);
    private final Object lock = new Object();
    private final AtomicLong acksFailed = new AtomicLong();
    private final AtomicLong fences = new AtomicLong();
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
     * Sends {@code frame} and returns its answer: the first frame {@code answers} accepts, or an
     * {@code error}, waiting at most the request timeout in all, reconnections included. An
     * {@code error} names no request, and some answer none (an asynchronous replay failure, a
     * refused keepalive heartbeat): one that comes while this waits is this call's answer only if
     * the hub answers a fence sent after it before it answers the call otherwise (the hub answers
     * a connection's frames in order, so the call's own answer comes before the fence's), or
     * refuses the fence too ({@code busy} or {@code rate_limited}: a second error of another kind
     * is the call's own answer, and the first goes to the inbox), or nothing else came by the
     * timeout. Requests and ack rounds hold
     * the link one at a time, and the answer of a call that timed out is not taken by the next one
     * ({@link Connection#late}).
     *
     * @throws ToolFailure {@code hub_unavailable} when no connection could be had in time,
     *     {@code no_answer} when the hub took the frame and did not answer in time
     */
    ObjectNode request(ObjectNode frame, Predicate<ObjectNode> answers) throws ToolFailure {
        long deadline = System.nanoTime() + settings.requestTimeout().toNanos();
        if (!takeTurn(deadline)) {
            throw ToolFailure.noAnswer("an earlier call to the hub is still waiting for its answer; try again");
        }
        try {
            int attempt = 0;
            while (true) {
                Connection conn = awaitConnection(deadline);
                Pending pending = new Pending(Frames.type(frame), answers, false);
                if (!conn.await(pending)) {
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
                    ObjectNode answered = conn.giveUp(pending); // its answer, should it come, is not the next call's
                    if (answered != null) {
                        return answered; // it came as the wait ended
                    }
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
                    conn.giveUp(pending);
                    throw ToolFailure.noAnswer("interrupted");
                } finally {
                    conn.release(pending);
                }
            }
        } finally {
            oneAtATime.release();
        }
    }

    /** Waits for the link's turn (requests and ack rounds go one at a time) until {@code deadline}. */
    private boolean takeTurn(long deadline) {
        try {
            return oneAtATime.tryAcquire(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /**
     * Acknowledges directed chats' journal seqs (wire {@code ack}) and returns those the hub took,
     * in the order given; none while disconnected (nothing is sent: the next registration's
     * {@code since_seq} moves the hub's watermark as far).
     *
     * <p>The hub answers an ack only when it refuses it (an {@code error}, e.g. {@code
     * rate_limited}), and that error does not say which ack it refuses. So the acks go in a round
     * that holds the link like a request, closed by a fence: a {@code resume_request} whose
     * {@code since} is unique, echoed in its {@code resume_snapshot}. The hub answers a
     * connection's frames in the order it read them, so the errors that come before the fence's
     * snapshot are the acks' (less the fences sent before it, each refused, since only the first
     * snapshot ends the wait). When a round has refusals, every ack of it is sent again one at a
     * time (an ack the hub already took changes nothing), in passes with a pause after each pass
     * that had a refusal, until each is taken or the request timeout has passed. One not taken is
     * counted in {@code acks_failed} and logged; it is not returned.
     */
    List<Long> ack(List<Long> seqs) {
        if (seqs.isEmpty()) {
            return List.of();
        }
        Connection conn;
        synchronized (lock) {
            conn = current;
        }
        if (conn == null || conn.lost || conn.protocolVersion < 2) {
            return List.of();
        }
        long deadline = System.nanoTime() + settings.requestTimeout().toNanos();
        List<Long> taken = new ArrayList<>();
        String problem = "an earlier call to the hub held the link for the whole timeout";
        if (takeTurn(deadline)) {
            try {
                if (round(conn, seqs, deadline) == 0) {
                    taken.addAll(seqs);
                } else {
                    // one at a time, so that a refusal says which; passes until each is taken
                    List<Long> left = new ArrayList<>(seqs);
                    long pause = FIRST_ACK_PAUSE_MS;
                    while (true) {
                        for (java.util.Iterator<Long> it = left.iterator(); it.hasNext(); ) {
                            long seq = it.next();
                            if (round(conn, List.of(seq), deadline) == 0) {
                                taken.add(seq);
                                it.remove();
                            }
                        }
                        if (left.isEmpty()) {
                            break;
                        }
                        pauseUntil(Math.min(deadline, System.nanoTime() + pause * 1_000_000L));
                        pause = Math.min(MAX_ACK_PAUSE_MS, pause * 2);
                    }
                }
                problem = null;
            } catch (RoundEnded ended) {
                problem = ended.getMessage();
            } finally {
                oneAtATime.release();
            }
        }
        taken.sort(java.util.Comparator.comparingInt(seqs::indexOf)); // retries may have been taken out of order
        if (taken.size() < seqs.size()) {
            List<Long> failed = new ArrayList<>(seqs);
            failed.removeAll(taken);
            acksFailed.addAndGet(failed.size());
            LOG.warn("the hub did not take the ack of seq {} ({}); their deferred receipts are lost, and the hub "
                    + "counts those chats read only once a later ack or registration passes them", failed,
                    problem == null ? "refused" : problem);
        }
        return taken;
    }

    /**
     * Sends the acks of {@code seqs} and a fence, and waits for the fence's answer.
     *
     * @return how many of the acks the hub refused
     * @throws RoundEnded when the connection dropped, or {@code deadline} passed (the connection is
     *     then closed: answers still owed to the round cannot be told from a later call's)
     */
    private int round(Connection conn, List<Long> seqs, long deadline) throws RoundEnded {
        if (deadline - System.nanoTime() <= 0) {
            throw new RoundEnded("no time left within the request timeout");
        }
        AckRound round = new AckRound(seqs.size());
        if (!conn.await(round)) {
            throw new RoundEnded("the connection dropped");
        }
        try {
            for (long seq : seqs) {
                ObjectNode ack = Frames.request(settings.name(), "ack");
                ack.put("seq", seq);
                conn.client.sendAsync(ack);
            }
            long pause = FIRST_FENCE_PAUSE_MS;
            synchronized (round) {
                sendFence(conn, round);
                long nextFence = System.nanoTime() + pause * 1_000_000L;
                while (!round.settled()) {
                    if (round.lost) {
                        throw new RoundEnded("the connection dropped");
                    }
                    long now = System.nanoTime();
                    if (now - deadline >= 0) {
                        LOG.warn("the hub did not answer the fence of an ack round within {} s; reconnecting, so that "
                                + "its late answers are not taken for another call's", settings.requestTimeout()
                                .toMillis() / 1000.0);
                        conn.client.close();
                        throw new RoundEnded("no answer in time");
                    }
                    if (now - nextFence >= 0 && !round.fenceAnswered()) {
                        sendFence(conn, round); // the last one may have been refused: it would never be answered
                        pause = Math.min(MAX_ACK_PAUSE_MS, pause * 2);
                        nextFence = now + pause * 1_000_000L;
                    }
                    long waitNanos = Math.min(deadline - now, nextFence - now);
                    round.wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(waitNanos)));
                }
                return round.refused();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            conn.client.close();
            throw new RoundEnded("interrupted");
        } finally {
            conn.release(round);
        }
    }

    /** On the caller's thread, holding {@code round}'s lock. */
    private void sendFence(Connection conn, AckRound round) {
        round.fences.add(sendFence(conn));
    }

    /** Sends a fence of its own and returns its {@code since}; safe from the event loop. */
    private long sendFence(Connection conn) {
        long since = FENCE_BASE + (fences.incrementAndGet() & (FENCE_BASE - 1));
        ObjectNode fence = Frames.request(settings.name(), "resume_request");
        fence.put("since", since);
        conn.client.sendAsync(fence);
        return since;
    }

    private static void pauseUntil(long deadline) throws RoundEnded {
        long left = deadline - System.nanoTime();
        if (left > 0) {
            try {
                TimeUnit.NANOSECONDS.sleep(left);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new RoundEnded("interrupted");
            }
        }
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
            s.put("cursor_resets", inbox.cursorResets());
            s.put("replay_holds_cut", inbox.replayHoldsCut());
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
        conn.lose();
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
            if (status != null && refusesAgent(status)) {
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

    /** What a connection waits for: a request's answer, or the answers to an ack round. */
    private sealed interface Waiter permits Pending, AckRound {
    }

    /**
     * A request waiting for its answer: a frame {@code answers} accepts or, unless {@code
     * registration}, an {@code error} confirmed by a fence ({@link #request}).
     */
    private static final class Pending implements Waiter {
        private final String verb;
        private final Predicate<ObjectNode> answers;
        private final boolean registration;
        private final CompletableFuture<ObjectNode> reply = new CompletableFuture<>();
        /** The first {@code error} that came while this waited, or null; guarded by the connection. */
        ObjectNode error;
        /** The {@code since} of the fence sent after {@link #error}; guarded by the connection. */
        long fence;

        Pending(String verb, Predicate<ObjectNode> answers, boolean registration) {
            this.verb = verb;
            this.answers = answers;
            this.registration = registration;
        }

        String verb() {
            return verb;
        }

        Predicate<ObjectNode> answers() {
            return answers;
        }

        boolean registration() {
            return registration;
        }

        CompletableFuture<ObjectNode> reply() {
            return reply;
        }

        /** True when {@code f} is the snapshot of the fence sent after this call's tentative error. */
        boolean fenceAnswered(ObjectNode f) {
            return fence != 0 && "resume_snapshot".equals(Frames.type(f)) && f.path("since").canConvertToLong()
                    && f.path("since").longValue() == fence;
        }
    }

    /** The answer a call that timed out may still get: skipped when it comes, not taken by a later call. */
    private record Late(String verb, Predicate<ObjectNode> answers) {
    }

    /**
     * The acks of one round and the fences sent after them; the hub answers a connection's frames
     * in order, so every {@code error} before the first fence's snapshot answers an ack or a fence
     * sent before that one.
     */
    private static final class AckRound implements Waiter {
        final int acks;
        /** The {@code since} of each fence, in the order sent. */
        final List<Long> fences = new ArrayList<>();
        /** Errors before the first fence snapshot. */
        int errors;
        /** Index in {@link #fences} of the first one answered with a snapshot, or -1. */
        int firstAnswered = -1;
        /** Answers (errors or snapshots) to the fences sent after that one. */
        int answersAfter;
        boolean lost;

        AckRound(int acks) {
            this.acks = acks;
        }

        /** On the event loop: true when {@code f} answers this round. */
        synchronized boolean offer(ObjectNode f) {
            String type = Frames.type(f);
            if ("error".equals(type)) {
                if (firstAnswered < 0) {
                    errors++;
                } else {
                    answersAfter++;
                }
            } else if ("resume_snapshot".equals(type) && f.path("since").canConvertToLong()
                    && fences.contains(f.path("since").longValue())) {
                if (firstAnswered < 0) {
                    firstAnswered = fences.indexOf(f.path("since").longValue());
                } else {
                    answersAfter++;
                }
            } else {
                return false;
            }
            notifyAll();
            return true;
        }

        synchronized void lose() {
            lost = true;
            notifyAll();
        }

        boolean fenceAnswered() {
            return firstAnswered >= 0;
        }

        /** Every answer owed is in: each ack and fence refused, or a fence answered and the later ones too. */
        boolean settled() {
            return firstAnswered >= 0 ? answersAfter >= fences.size() - 1 - firstAnswered
                    : errors >= acks + fences.size();
        }

        /** The acks refused: the errors before the answered fence, less the earlier fences' own. */
        int refused() {
            return firstAnswered >= 0 ? errors - firstAnswered : acks;
        }
    }

    /** An ack round could not finish: its acks are not known to have been taken. */
    private static final class RoundEnded extends Exception {
        RoundEnded(String message) {
            super(message, null, false, false);
        }
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
        /** Answers owed to calls that timed out, kept at most this many (the oldest go first). */
        static final int MAX_LATE = 32;
        final HubClient client;
        volatile boolean lost;
        volatile int protocolVersion = 1;
        /** What this connection waits for, if anything; guarded by this. */
        private Waiter waiter;
        /** Answers of calls that timed out, oldest first; guarded by this. */
        private final ArrayDeque<Late> late = new ArrayDeque<>();
        /** The payload of an {@code error} received while registering (it says why a refusal came), or null. */
        volatile String registrationError;
        /** Completed by {@code welcome}, which names the hub the cursor must count in. */
        final CompletableFuture<Void> welcomed = new CompletableFuture<>();

        Connection(HubClient client) {
            this.client = client;
        }

        /** Makes {@code w} what this connection waits for; false when it is lost already. */
        synchronized boolean await(Waiter w) {
            if (lost) {
                return false;
            }
            waiter = w;
            return true;
        }

        /** {@code w} no longer waits. */
        synchronized void release(Waiter w) {
            if (waiter == w) {
                waiter = null;
            }
        }

        /**
         * {@code p} timed out: its answer, should it still come, is skipped rather than taken
         * by a later call. Returns the answer if it came meanwhile.
         */
        synchronized ObjectNode giveUp(Pending p) {
            release(p);
            if (p.reply().isDone() && !p.reply().isCompletedExceptionally()) {
                return p.reply().getNow(null);
            }
            if (late.size() >= MAX_LATE) {
                late.removeFirst();
            }
            late.addLast(new Late(p.verb(), p.answers()));
            return p.error; // nothing answered the call otherwise, nor the fence: the error is the best answer
        }

        /** The connection closed: whatever waits learns it. */
        void lose() {
            Waiter w;
            synchronized (this) {
                lost = true;
                w = waiter;
            }
            if (w instanceof Pending p) {
                p.reply().completeExceptionally(new ConnectionLost("connection closed"));
            } else if (w instanceof AckRound r) {
                r.lose();
            }
        }

        /**
         * On the event loop: gives {@code f} to what waits for it. A late answer of a call that
         * timed out goes first: its own answer, or an {@code error} (which names no request; the
         * oldest such call takes it). Returns false when nothing waits for {@code f}.
         */
        private synchronized boolean answer(ObjectNode f, boolean error) {
            for (java.util.Iterator<Late> it = late.iterator(); it.hasNext(); ) {
                Late l = it.next();
                if (l.answers().test(f)) {
                    it.remove();
                    // not the next call's; still filed when it concerns the agent (a grant it holds)
                    LOG.info("the answer to {} came after the call had timed out; not taken by another call", l.verb());
                    return false;
                }
            }
            if (error && !late.isEmpty()) {
                Late l = late.removeFirst();
                LOG.info("an error came after {} had timed out; taken as its late answer, not the next call's: {}",
                        l.verb(), f.path("payload").asText());
                return false;
            }
            if (waiter instanceof Pending p) {
                boolean fenced = p.fenceAnswered(f); // first: a call may wait for a snapshot of the same type
                if (!fenced && p.answers().test(f)) {
                    if (p.error != null && !p.registration()) {
                        offerToInbox(p.error, "error"); // it answered something else
                        p.error = null;
                    }
                    p.reply().complete(f);
                    return true;
                }
                if (fenced || (error && p.error != null && HubClient.refusedForLoad(f))) {
                    // the hub answered the fence (a snapshot, or a refusal: a fence changes nothing, so
                    // only a busy or rate-limited hub refuses it) before answering the call otherwise:
                    // the call's answer came first, and it was the error
                    if (error) {
                        LOG.debug("the fence after an error to {} was refused too: {}", p.verb(),
                                f.path("payload").asText());
                    }
                    p.reply().complete(p.error);
                    return true;
                }
                if (error && p.error != null) {
                    // not a fence's refusal: the call's own answer, and the first error answered something else
                    offerToInbox(p.error, "error"); // set only for a call, never for a registration
                    p.error = null;
                    p.reply().complete(f);
                    return true;
                }
                if (error && !p.registration()) {
                    p.error = f; // the call's answer only if the fence sent now is answered first
                    p.fence = sendFence(this);
                    return true;
                }
                return false;
            }
            return waiter instanceof AckRound r && r.offer(f);
        }

        /**
         * Registers and proves it with a {@code who_request} answered: on an open hub
         * {@code welcome} comes before the registration is even read, so only an answer to a
         * later frame shows the name was bound. A busy or rate-limited hub binds the name and
         * refuses the {@code who_request} only: it is sent again after a pause on this connection
         * (closing it would abandon the replay the hub deferred for it), until the connect timeout.
         */
        void register(boolean takeover) throws Refused, IOException, TimeoutException {
            long deadline = System.nanoTime() + connectTimeout.toNanos();
            // an open hub sends welcome at connect: it may be queued already, and comes first
            client.onFrameAfterQueued(this::onFrame);
            client.closeFuture().whenComplete((status, t) -> welcomed.complete(null)); // no welcome is coming
            if (settings.token() == null) {
                // an open hub sends welcome at connect: its hub_id decides whether the cursor is this
                // hub's before since_seq is sent (a token hub sends it only after the registration)
                try {
                    welcomed.get(connectTimeout.toMillis(), TimeUnit.MILLISECONDS);
                } catch (ExecutionException | TimeoutException e) {
                    LOG.debug("no welcome before the registration; the hub is checked when it comes");
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted");
                }
            }
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
            CompletableFuture<Void> ended = new CompletableFuture<>();
            client.closeFuture().whenComplete((status, t) -> {
                if (status != null && refusesAgent(status)) {
                    // the hub refused the agent itself (name, token, identity): retrying gets the same answer
                    String why = registrationError;
                    ended.completeExceptionally(new Refused("closed " + status.code() + " " + status.reason()
                            + (why == null ? "" : ": " + why)));
                } else {
                    ended.completeExceptionally(new IOException("closed during registration" + (status == null
                            ? "" : " (" + status.code() + " " + status.reason() + ")")));
                }
            });
            client.sendAsync(hb);
            long pause = FIRST_WHO_PAUSE_MS;
            while (true) {
                Pending p = new Pending("registration", f -> "who_snapshot".equals(Frames.type(f))
                        || HubClient.refusedForLoad(f), true);
                await(p);
                ended.whenComplete((x, why) -> p.reply().completeExceptionally(why)); // closed already, or later
                client.sendAsync(Frames.request(settings.name(), "who_request"));
                ObjectNode answer;
                try {
                    answer = registrationWait(p.reply(), Math.max(0, deadline - System.nanoTime()));
                } finally {
                    release(p);
                }
                if ("who_snapshot".equals(Frames.type(answer))) {
                    return;
                }
                long left = deadline - System.nanoTime();
                LOG.info("the hub refused who_request during the registration ({}); asking again in {} ms",
                        answer.path("error_code").asText(), Math.min(pause, left / 1_000_000L));
                try {
                    registrationWait(ended, Math.max(0, Math.min(left, pause * 1_000_000L)));
                } catch (TimeoutException paused) {
                    if (deadline - System.nanoTime() <= 0) {
                        throw new TimeoutException("the hub kept refusing who_request (" + answer.path("error_code")
                                .asText() + ") for the whole connect timeout");
                    }
                }
                pause = Math.min(MAX_WHO_PAUSE_MS, pause * 2);
            }
        }

        /**
         * Waits up to {@code nanos} for a step of the registration: a refusal of the agent is thrown
         * as it is, any other failure (the connection closed) as an {@link IOException}.
         */
        private static <T> T registrationWait(CompletableFuture<T> step, long nanos)
                throws Refused, IOException, TimeoutException {
            try {
                return step.get(nanos, TimeUnit.NANOSECONDS);
            } catch (ExecutionException e) {
                if (e.getCause() instanceof Refused r) {
                    throw r;
                }
                throw new IOException(e.getCause().getMessage(), e.getCause());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted");
            }
        }

        /** On the connection's event loop: answer the pending request, or file the frame in the inbox. */
        void onFrame(ObjectNode f) {
            String type = Frames.type(f);
            if ("welcome".equals(type)) {
                protocolVersion = f.path("protocol_version").canConvertToInt() ? f.path("protocol_version").asInt() : 1;
                inbox.hubIdentified(f.path("hub_id").isTextual() ? f.path("hub_id").textValue() : null);
                welcomed.complete(null);
                return;
            }
            Waiter w;
            synchronized (this) {
                w = waiter;
            }
            if ("error".equals(type) && w instanceof Pending p && p.registration() && !HubClient.refusedForLoad(f)) {
                registrationError = f.path("payload").asText();
            }
            if ("who_snapshot".equals(type) && w instanceof Pending p && p.registration()) {
                // here, on the event loop: the chats read before it are those its count may include
                inbox.replayPending(mailboxPending(f));
            }
            if (("auth_denied".equals(type) || "name_conflict".equals(type)) && w instanceof Pending p
                    && p.registration()) {
                p.reply().completeExceptionally(new Refused(type + ": " + f.path("payload").asText()));
                return;
            }
            if (!answer(f, "error".equals(type))) {
                offerToInbox(f, type);
            }
        }
    }

    /**
     * This agent's {@code mailbox_pending} count in {@code snapshot}: 0 without a journal
     * ({@code null}), or when it is not listed (the hub lists every identity with pending mail).
     */
    private long mailboxPending(ObjectNode snapshot) {
        JsonNode count = snapshot.path("mailbox_pending").path(settings.name());
        return count.canConvertToLong() ? Math.max(0, count.longValue()) : 0;
    }

    /** Frames that answer no request but concern this agent. */
    private void offerToInbox(ObjectNode f, String type) {
        String me = settings.name();
        switch (type) {
            case "chat" -> {
                JsonNode live = f.get("seq");
                if (live != null && live.isIntegralNumber() && live.canConvertToLong()
                        && !f.path("replayed").asBoolean(false)) {
                    inbox.liveSeq(live.longValue()); // any chat's seq shows where the hub's journal is
                }
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
            case "delivery_receipt", "recipient_liveness_warning", "error", "claim_denied" ->
                    inbox.offer(kind(f, type), 0);
            case "claim_granted" -> {
                // a grant no call took (it came late, or after an error taken for its answer): the agent holds it
                if (me.equals(f.path("owner").asText())) {
                    inbox.offer(kind(f, type), 0);
                }
            }
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
