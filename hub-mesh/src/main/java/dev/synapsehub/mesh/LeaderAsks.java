package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.net.extension.ClusterLeader;
import org.apache.ratis.client.RaftClientRpc;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;

import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * A node's {@link ClusterLeader}: an extension's ask travels to the leader the way a follower's
 * mutation does ({@link Forwarder}), as a Raft read answered asynchronously by the leader's state
 * machine, which hands it to the handler served under its name. Each ask carries this node's id
 * and a number of its own, kept across its resends: the leader hands one node's asks to the
 * handler in that order (Ratis runs client requests on a pool, so they may arrive out of it; a
 * gap is waited for {@link #GAP_MILLIS} at most, for an ask that never comes), and a resend of an
 * ask the leader is still working on joins it rather than running it twice. The numbers restart
 * with the node, so each ask also carries this instance's incarnation (a random id): the leader
 * keys its order and its asks in flight by node and incarnation, so a restarted node's ask 1
 * never joins, nor waits behind, what its previous life asked.
 *
 * <p>An ask runs at most once, also when its answer is lost (a stream closed or reset after the
 * leader took it). Asks travel as stale reads, so Ratis never refuses one for its role (a
 * refusal fails every request on the stream, also those the leader took): the leader's state
 * machine says {@code not_leading} itself, per ask. The leader keeps each answer its handler gave
 * for {@link #RETAIN_MILLIS}, by the ask's node, incarnation and number, and answers a resend
 * with it. An ask whose send failed after it may have left this node is resent only to the node
 * it went to ({@code "resent"}), until that node answers it or says it never took it; after
 * {@code RETAIN_MILLIS / 2}, or at once when that node refuses connections (it is down), it fails
 * as unknown instead of being sent again. Its channel to a node is reset once per broken channel
 * ({@link ChannelResets}), not once per failed ask. A node that started
 * less than {@code RETAIN_MILLIS} ago cannot tell whether its previous life took a resent ask, so
 * it refuses one it has no answer for ("outcome unknown", never run).
 */
final class LeaderAsks implements ClusterLeader {
    private static final System.Logger LOG = System.getLogger(LeaderAsks.class.getName());
    /** The member naming the service of an ask (a forwarded mutation has none). */
    static final String SERVICE = "service";
    private static final String NOT_LEADING = "not_leading";
    /** The member naming the asking node's incarnation (absent from an older node's ask: keyed by node alone). */
    static final String INCARNATION = "incarnation";
    private static final long RETRY_MILLIS = 50;
    /** How long the leader holds an ask that came before an earlier one of the same node. */
    static final long GAP_MILLIS = 200;
    /**
     * How long a leader keeps an answer its handler gave, for a resend whose first answer was lost:
     * twice the longest an ask waits for one ({@link MeshNode#ASK_TIMEOUT_MILLIS}); an asker stops
     * resending to the node it sent to after half of it.
     */
    static final long RETAIN_MILLIS = 2 * MeshNode.ASK_TIMEOUT_MILLIS;
    /** The most answers a leader keeps; past it the oldest go early (logged, counted, and never run again). */
    static final int ANSWERS_KEPT = 10_000;
    /** The member marking a resend to the node the ask may have reached already. */
    static final String RESENT = "resent";

    private final String nodeId;
    private final RaftGroupId groupId;
    private final RaftClientRpc rpc;
    private final Supplier<RaftPeerId> leader;
    private final BooleanSupplier decidesHere;
    private final ScheduledExecutorService scheduler;
    private final long gapMillis;
    private final ClientId clientId = ClientId.randomId();
    private final AtomicLong callIds = new AtomicLong();
    private final AtomicLong seqs = new AtomicLong();
    /** This life of the node: its ask numbers start again at 1 after a restart. */
    private final String incarnation = java.util.UUID.randomUUID().toString();
    /** Scheduled tasks (a resend, a gap timer) that failed: each logged once. */
    private final AtomicLong taskFailures = new AtomicLong();
    /** Sends to the leader that threw before anything left this node (each logged once, then resent). */
    private final AtomicLong sendFailures = new AtomicLong();
    /** True from a failed send until one succeeds: a resend every 50 ms is logged once per streak, each counted. */
    // one flag for all asks is enough: it only gates the log line; each failure is counted and its own ask resent
    private final java.util.concurrent.atomic.AtomicBoolean sendFailing = new java.util.concurrent.atomic.AtomicBoolean();
    /** Leadership listeners that threw (each logged once; the other listeners are still told). */
    private final AtomicLong listenerFailures = new AtomicLong();
    private final Map<String, Function<ObjectNode, CompletableFuture<ObjectNode>>> handlers = new ConcurrentHashMap<>();
    private final List<Runnable> listeners = new CopyOnWriteArrayList<>();
    /** Leader side: per asking node, the order its asks are handed over in. */
    private final Map<String, OriginOrder> orders = new HashMap<>();
    /** Leader side: asks being handled, by origin and number (a resend joins its first arrival). */
    private final Map<String, CompletableFuture<ObjectNode>> inFlight = new HashMap<>();
    /** Leader side: the answers handlers gave, by origin and number, oldest first (a resend gets its first answer). */
    private final java.util.LinkedHashMap<String, Answered> answered = new java.util.LinkedHashMap<>();
    /** Leader side: per asking node's life, the highest number whose answer went before its time (cap reached). */
    private final Map<String, Forgotten> forgotten = new HashMap<>();
    /** Answers let go before {@link #RETAIN_MILLIS} because {@link #ANSWERS_KEPT} was reached. */
    private final AtomicLong answersForgotten = new AtomicLong();
    private final long retainNanos;
    /** When this node resets its channel to a node after a failed ask: once per channel, as its forwards do. */
    private final ChannelResets resets = new ChannelResets();
    /** When this node's asks began: a resend it has no answer for may have run in its previous life until RETAIN later. */
    private final long startedNanos = System.nanoTime();

    LeaderAsks(String nodeId, RaftGroupId groupId, RaftClientRpc rpc, Supplier<RaftPeerId> leader,
               BooleanSupplier decidesHere, ScheduledExecutorService scheduler) {
        this(nodeId, groupId, rpc, leader, decidesHere, scheduler, GAP_MILLIS);
    }

    /** As above, waiting {@code gapMillis} for an ask that came late (tests). */
    LeaderAsks(String nodeId, RaftGroupId groupId, RaftClientRpc rpc, Supplier<RaftPeerId> leader,
               BooleanSupplier decidesHere, ScheduledExecutorService scheduler, long gapMillis) {
        this(nodeId, groupId, rpc, leader, decidesHere, scheduler, gapMillis, RETAIN_MILLIS);
    }

    /** As above, keeping answers {@code retainMillis} (tests). */
    LeaderAsks(String nodeId, RaftGroupId groupId, RaftClientRpc rpc, Supplier<RaftPeerId> leader,
               BooleanSupplier decidesHere, ScheduledExecutorService scheduler, long gapMillis, long retainMillis) {
        this.retainNanos = TimeUnit.MILLISECONDS.toNanos(retainMillis);
        this.gapMillis = gapMillis;
        this.nodeId = nodeId;
        this.groupId = groupId;
        this.rpc = rpc;
        this.leader = leader;
        this.decidesHere = decidesHere;
        this.scheduler = scheduler;
    }

    @Override
    public boolean leadsHere() {
        return decidesHere.getAsBoolean();
    }

    @Override
    public void serve(String service, Function<ObjectNode, CompletableFuture<ObjectNode>> handler) {
        handlers.put(service, handler);
    }

    @Override
    public void onLeadershipChange(Runnable listener) {
        listeners.add(listener);
    }

    /** This node's leader changed or became ready (Ratis' thread): tells the listeners. */
    void leadershipChanged() {
        List<HeldAsk> refused = new java.util.ArrayList<>();
        synchronized (orders) {
            if (!leadsHere()) {
                // lost the lead: every held ask is refused now (its asker resends it to the new leader), not
                // handed over later by a gap timer on a node that no longer leads
                for (OriginOrder o : orders.values()) {
                    refused.addAll(o.held.values());
                    if (o.gapTimer != null) {
                        o.gapTimer.cancel(false);
                    }
                }
                orders.clear();
            } else {
                // a leader again later starts each node's order afresh, not from what it saw in an older term
                orders.values().removeIf(o -> o.held.isEmpty());
            }
        }
        refused.forEach(a -> a.refuse().run());
        for (Runnable l : listeners) {
            try {
                l.run();
            } catch (RuntimeException e) {
                listenerFailures.incrementAndGet();
                LOG.log(System.Logger.Level.ERROR, "a leadership listener failed: "
                        + LogRedactor.scrub(String.valueOf(e.getMessage())), LogRedactor.safe(e));
            }
        }
    }

    /** Scheduled tasks of this node's asks that failed (each logged once). */
    long taskFailures() {
        return taskFailures.get();
    }

    /** This node's ask and listener failures since start, measured now (each was logged once). */
    Failures failures() {
        return new Failures(sendFailures.get(), taskFailures.get(), listenerFailures.get(), answersForgotten.get());
    }

    /**
     * What went wrong with this node's asks of the leader and its leadership listeners, since start.
     *
     * @param sends sends to the leader that threw before anything left this node (the ask was resent)
     * @param tasks scheduled tasks (a resend, a gap timer) that failed
     * @param listeners leadership listeners that threw
     * @param answersForgotten answers of asks let go before their time because too many were kept
     */
    record Failures(long sends, long tasks, long listeners, long answersForgotten) {
    }

    @Override
    public CompletableFuture<ObjectNode> ask(String service, ObjectNode body, Duration bound) {
        ObjectNode request = request(service, body);
        CompletableFuture<ObjectNode> answer = new CompletableFuture<>();
        long now = System.nanoTime();
        attempt(request, ByteString.copyFrom(MeshJson.bytes(request)), answer, now + bound.toNanos(), null,
                now + retainNanos / 2);
        return answer;
    }

    /** The ask as it travels to the leader, numbered next in this incarnation's order. */
    ObjectNode request(String service, ObjectNode body) {
        ObjectNode request = MeshJson.MAPPER.createObjectNode();
        request.put("protocol", MeshProtocol.PROTOCOL);
        request.put("version", MeshProtocol.VERSION);
        request.put(SERVICE, service);
        request.put("origin", nodeId);
        request.put(INCARNATION, incarnation);
        request.put("seq", seqs.incrementAndGet());
        request.set("body", body);
        return request;
    }

    /**
     * Sends the ask to the leader, or, when {@code pinned} names a node it may have reached already,
     * again to that node only (marked {@link #RESENT}), which answers it as it did or says it never
     * took it; pinned resends stop at {@code pinEnd}.
     */
    private void attempt(ObjectNode request, ByteString bytes, CompletableFuture<ObjectNode> answer, long deadline,
                         RaftPeerId pinned, long pinEnd) {
        RaftPeerId to = pinned != null ? pinned : leader.get();
        if (pinned == null && to != null && to.toString().equals(nodeId)) {
            if (!leadsHere()) {
                retry(request, bytes, answer, deadline, null, pinEnd); // leads, not ready yet
                return;
            }
            // bounded like an ask sent to another node: a handler that never answers does not hold the asker
            long left = Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
            answered(arrived(request).copy().orTimeout(left, TimeUnit.MILLISECONDS), request, bytes, answer, deadline,
                    null, pinEnd);
            return;
        }
        if (to == null) {
            retry(request, bytes, answer, deadline, null, pinEnd);
            return;
        }
        long left = Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
        ByteString sending = pinned == null ? bytes
                : ByteString.copyFrom(MeshJson.bytes(request.deepCopy().put(RESENT, true)));
        // a stale read: Ratis hands it to the state machine whatever this node's role, and the leader's side
        // says not_leading per ask; a non-stale read refused for the role fails every ask on the stream
        RaftClientRequest r = RaftClientRequest.newBuilder().setClientId(clientId).setServerId(to)
                .setGroupId(groupId).setCallId(callIds.incrementAndGet()).setMessage(Message.valueOf(sending))
                .setType(AnyNodeRead.TYPE).setTimeoutMs(left).build();
        CompletableFuture<RaftClientReply> sent;
        ChannelResets.Sent on = resets.sent(to.toString(), System.nanoTime());
        try {
            sent = rpc.sendRequestAsyncUnordered(r);
        } catch (RuntimeException e) {
            // nothing left this node, so a resend cannot run the ask twice; seen and counted, not retried unseen
            sendFailures.incrementAndGet();
            if (!sendFailing.getAndSet(true)) {
                LOG.log(System.Logger.Level.WARNING, "sending the " + request.path(SERVICE).asText()
                        + " ask to the leader " + to + " failed, resending (logged once until a send succeeds; each "
                        + "failure counted in synapse_mesh_leader_ask_send_failures_total): "
                        + LogRedactor.scrub(String.valueOf(e.getMessage())), LogRedactor.safe(e));
            }
            retry(request, bytes, answer, deadline, pinned, pinEnd);
            return;
        }
        if (sendFailing.getAndSet(false)) {
            LOG.log(System.Logger.Level.INFO, "sending asks to the leader " + to + " works again");
        }
        sent.orTimeout(left, TimeUnit.MILLISECONDS).whenComplete((reply, failure) -> {
            if (failure == null) {
                resets.answered(to.toString(), System.nanoTime());
            }
            if (failure != null) {
                Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                        ? failure.getCause() : failure;
                if (SendFailures.resendable(cause)) {
                    // the channel reconnects on the next request; reset once per channel: a reset fails every ask
                    // then on it ("Stream close"), which would pin each to this node though none had left
                    resets.reset(on, cause, () -> rpc.handleException(to, cause, true));
                    if (pinned != null && SendFailures.connectionRefused(cause)) {
                        // the node it may have reached is down; restarted, it refuses a resend it has no answer for
                        answer.completeExceptionally(new IOException("the " + request.path(SERVICE).asText()
                                + " ask may have reached " + pinned + ", which is down now (its connection refused);"
                                + " it may or may not have run"));
                        return;
                    }
                    // it may have reached the node (a stream closed after it left): only that node may take it again
                    retry(request, bytes, answer, deadline, SendFailures.neverLeft(cause) ? pinned : to, pinEnd);
                } else {
                    answer.completeExceptionally(new IOException("the leader " + to + " did not answer: " + cause));
                }
            } else if (reply.getNotLeaderException() != null || reply.getLeaderNotReadyException() != null) {
                retry(request, bytes, answer, deadline, to, pinEnd); // refused by Ratis, the others on its stream too
            } else if (!reply.isSuccess()) {
                answer.completeExceptionally(new IOException("the leader " + to + " failed: " + reply.getException()));
            } else {
                JsonNode json;
                try {
                    json = MeshJson.tree(reply.getMessage().getContent().toByteArray());
                } catch (IllegalArgumentException e) {
                    answer.completeExceptionally(new IOException("the leader's answer is unreadable: " + e.getMessage()));
                    return;
                }
                answered(CompletableFuture.completedFuture(json instanceof ObjectNode o ? o
                        : MeshJson.MAPPER.createObjectNode()), request, bytes, answer, deadline, pinned, pinEnd);
            }
        });
    }

    private void answered(CompletableFuture<ObjectNode> reply, ObjectNode request, ByteString bytes,
                          CompletableFuture<ObjectNode> answer, long deadline, RaftPeerId pinned, long pinEnd) {
        reply.whenComplete((json, failure) -> {
            if (failure != null) {
                answer.completeExceptionally(failure);
            } else if (json.path(NOT_LEADING).asBoolean(false)) {
                // no handler there saw it, and none there will: free to go to the current leader
                retry(request, bytes, answer, deadline, null, pinEnd);
            } else if (json.has("error")) {
                answer.completeExceptionally(new IOException("the leader refused the ask: " + json.path("error").asText()));
            } else {
                answer.complete(json.path("answer") instanceof ObjectNode o ? o : MeshJson.MAPPER.createObjectNode());
            }
        });
    }

    private void retry(ObjectNode request, ByteString bytes, CompletableFuture<ObjectNode> answer, long deadline,
                       RaftPeerId pinned, long pinEnd) {
        long next = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(RETRY_MILLIS);
        if (pinned != null && (next - deadline > 0 || next - pinEnd > 0)) {
            // it may have run there: sent elsewhere it could run twice, and only that node can tell
            answer.completeExceptionally(new IOException("the " + request.path(SERVICE).asText() + " ask may have"
                    + " reached " + pinned + ", which did not answer it again in time; it may or may not have run"));
            return;
        }
        if (next - deadline > 0) {
            answer.completeExceptionally(new Unreached("no leader of the mesh took the " + request.path(SERVICE).asText()
                    + " ask in time"));
            return;
        }
        try {
            scheduler.schedule(() -> {
                try {
                    attempt(request, bytes, answer, deadline, pinned, pinEnd);
                } catch (RuntimeException e) {
                    failed("a resend of an ask", e);
                    answer.completeExceptionally(new IOException("the resend of the " + request.path(SERVICE).asText()
                            + " ask failed: " + LogRedactor.scrub(String.valueOf(e.getMessage()))));
                }
            }, RETRY_MILLIS, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // the node is closing: the ask is answered, never left waiting on a resend that cannot run
            failed("a resend of an ask", e);
            answer.completeExceptionally(pinned != null ? new IOException("the node closed before " + pinned
                    + " answered the " + request.path(SERVICE).asText() + " ask again; it may or may not have run")
                    : new Unreached("the node closed before the " + request.path(SERVICE).asText()
                    + " ask reached a leader"));
        }
    }

    /** {@code task} for the scheduler: a failure is logged once and counted, never swallowed unseen. */
    private Runnable guarded(String what, Runnable task) {
        return () -> {
            try {
                task.run();
            } catch (RuntimeException e) {
                failed(what, e);
            }
        };
    }

    private void failed(String what, RuntimeException e) {
        taskFailures.incrementAndGet();
        LOG.log(System.Logger.Level.ERROR, what + " failed: " + LogRedactor.scrub(String.valueOf(e.getMessage())),
                LogRedactor.safe(e));
    }

    // ------------------------------------------------------------------ the leader's side

    /** An ask of another node, on the leader's state machine: the encoded answer. */
    CompletableFuture<Message> forwarded(JsonNode request) {
        return arrived(request).thenApply(json -> Message.valueOf(ByteString.copyFrom(MeshJson.bytes(json))));
    }

    /** Hands an ask to its handler in its node's order; completes with {@code {"answer": …}}, not_leading or error. */
    private CompletableFuture<ObjectNode> arrived(JsonNode request) {
        String service = request.path(SERVICE).asText("");
        Function<ObjectNode, CompletableFuture<ObjectNode>> handler = handlers.get(service);
        if (handler == null || !(request.get("body") instanceof ObjectNode body)) {
            ObjectNode e = MeshJson.MAPPER.createObjectNode();
            e.put("error", handler == null ? "no service '" + service + "' on this node" : "the ask has no body");
            return CompletableFuture.completedFuture(e);
        }
        String origin = request.path("origin").asText("");
        // the node's numbers restart with it: its order and its asks in flight are those of this life of it
        String life = request.hasNonNull(INCARNATION) ? origin + "@" + request.path(INCARNATION).asText() : origin;
        long seq = request.path("seq").asLong(-1);
        String key = life + "/" + seq;
        CompletableFuture<ObjectNode> answer;
        synchronized (this) {
            letGoOfOldAnswers();
            Answered done = answered.get(key);
            if (done != null) {
                // its first answer was lost: the answer it had, also from a node that no longer leads
                return CompletableFuture.completedFuture(done.answer().deepCopy());
            }
            CompletableFuture<ObjectNode> first = inFlight.get(key);
            if (first != null) {
                return first; // the same ask again (its channel was reset): the first arrival answers both
            }
            String unknown = mayHaveRun(life, seq, request.path(RESENT).asBoolean(false));
            if (unknown != null) {
                return CompletableFuture.completedFuture(MeshJson.MAPPER.createObjectNode().put("error", unknown));
            }
            if (!leadsHere()) {
                return CompletableFuture.completedFuture(notLeading());
            }
            answer = new CompletableFuture<>();
            inFlight.put(key, answer);
            answer.whenComplete((a, f) -> {
                synchronized (this) {
                    inFlight.remove(key);
                }
            });
        }
        Runnable refuse = () -> answer.complete(notLeading());
        Runnable run = () -> {
            if (!leadsHere()) {
                // held, or let go after a gap, past the lead: refused before any handler saw it, so the
                // asker resends it to the new leader (this node must not open the owner's link any more)
                refuse.run();
                return;
            }
            CompletableFuture<ObjectNode> handled;
            try {
                handled = handler.apply(body);
            } catch (RuntimeException e) {
                handled = CompletableFuture.failedFuture(e);
            }
            handled.whenComplete((a, f) -> {
                ObjectNode result;
                if (f != null) {
                    LOG.log(System.Logger.Level.WARNING, "the " + service + " ask of " + origin + " failed: "
                            + LogRedactor.scrub(String.valueOf(f.getMessage())));
                    result = MeshJson.MAPPER.createObjectNode().put("error", "the leader's " + service + " failed");
                } else {
                    result = MeshJson.MAPPER.createObjectNode();
                    result.set("answer", a);
                }
                remember(key, life, seq, result); // before it leaves the asks in flight: a resend always finds it
                answer.complete(result);
            });
        };
        inOrder(life, seq, new HeldAsk(run, refuse));
        return answer;
    }

    /**
     * Why an ask this node has no answer for may have run already (it must not run now), or null:
     * its number is at or below one whose answer went early, or it is a resend and this node
     * started too recently to know what its previous life ran.
     */
    private String mayHaveRun(String life, long seq, boolean resent) {
        Forgotten f = forgotten.get(life);
        if (f != null && seq <= f.seq()) {
            return "outcome unknown: this node no longer keeps the answers of that node's asks up to number " + f.seq()
                    + " (more than " + ANSWERS_KEPT + " were kept); the ask is not run again";
        }
        if (resent && System.nanoTime() - startedNanos < retainNanos) {
            return "outcome unknown: this node started too recently to tell whether it took the resent ask before;"
                    + " it is not run again";
        }
        return null;
    }

    /** Keeps a handler's answer for a resend (under the lock of this object). */
    private void remember(String key, String life, long seq, ObjectNode result) {
        synchronized (this) {
            answered.put(key, new Answered(life, seq, result, System.nanoTime()));
            letGoOfOldAnswers();
        }
    }

    /** Lets go of answers past {@link #RETAIN_MILLIS}, and the oldest past {@link #ANSWERS_KEPT} (logged, counted). */
    private void letGoOfOldAnswers() {
        long now = System.nanoTime();
        var it = answered.values().iterator();
        while (it.hasNext()) {
            Answered a = it.next();
            boolean expired = now - a.at() >= retainNanos;
            if (!expired && answered.size() <= ANSWERS_KEPT) {
                break;
            }
            it.remove();
            if (!expired) {
                // a resend of it could still come: numbers up to it are refused from now on, never run again
                forgotten.merge(a.life(), new Forgotten(a.seq(), now), (x, y) -> x.seq() >= y.seq() ? x : y);
                if (answersForgotten.getAndIncrement() == 0) {
                    LOG.log(System.Logger.Level.WARNING, "more than " + ANSWERS_KEPT + " answers of asks kept: the"
                            + " oldest go before their time, and a resend of one is refused as unknown (logged once;"
                            + " counted in synapse_mesh_leader_ask_answers_forgotten_total)");
                }
            }
        }
        forgotten.values().removeIf(f -> now - f.at() >= retainNanos);
    }

    /** A handler's answer to one ask, kept for a resend. */
    private record Answered(String life, long seq, ObjectNode answer, long at) {
    }

    /** The highest number of one node's life whose answer went before its time, and when. */
    private record Forgotten(long seq, long at) {
    }

    private static ObjectNode notLeading() {
        return MeshJson.MAPPER.createObjectNode().put(NOT_LEADING, true);
    }

    /** An ask waiting its turn: handed over when due, refused when this node no longer leads. */
    private record HeldAsk(Runnable handOver, Runnable refuse) {
    }

    /**
     * Runs the asks of {@code origin} now due, in its order, once {@code seq} arrived with
     * {@code run}; under the lock, so two arrivals never hand theirs over interleaved (a handler
     * does not block).
     */
    private void inOrder(String origin, long seq, HeldAsk ask) {
        synchronized (orders) {
            OriginOrder o = orders.computeIfAbsent(origin, k -> new OriginOrder());
            if (seq < 0 || o.next < 0 || seq < o.next) {
                // the first ask this leader sees of that node, or one it stopped waiting for: at once
                o.next = Math.max(o.next, seq + 1);
                ask.handOver().run();
                o.drain().forEach(Runnable::run);
                return;
            }
            o.held.put(seq, ask);
            o.drain().forEach(Runnable::run);
            if (!o.held.isEmpty() && o.gapTimer == null) {
                o.gapTimer = scheduler.schedule(guarded("the gap timer of " + origin, () -> gapTimedOut(origin, o)),
                        gapMillis, TimeUnit.MILLISECONDS);
            }
        }
    }

    /** An earlier ask of {@code origin} did not come in time: the held ones go on without it. */
    private void gapTimedOut(String origin, OriginOrder o) {
        synchronized (orders) {
            if (orders.get(origin) != o) {
                // a leadership change let go of this order (its held asks had drained, or were refused): the
                // order there now, if any, is a fresh one with a timer of its own
                return;
            }
            o.gapTimer = null;
            if (o.held.isEmpty()) {
                return;
            }
            o.next = o.held.firstKey();
            o.drain().forEach(Runnable::run);
            if (!o.held.isEmpty()) {
                o.gapTimer = scheduler.schedule(guarded("the gap timer of " + origin, () -> gapTimedOut(origin, o)),
                        gapMillis, TimeUnit.MILLISECONDS);
            }
        }
    }

    /** One node's order of asks on this leader: the next number due and those that came before it. */
    private static final class OriginOrder {
        private long next = -1;
        private final TreeMap<Long, HeldAsk> held = new TreeMap<>();
        private java.util.concurrent.ScheduledFuture<?> gapTimer;

        /** Removes and returns the held asks now due, in order. */
        List<Runnable> drain() {
            List<Runnable> due = new java.util.ArrayList<>();
            while (held.containsKey(next)) {
                due.add(held.remove(next).handOver());
                next++;
            }
            return due;
        }
    }

    /** Channel resets that threw, since start ({@code synapse_mesh_channel_reset_faults_total}). */
    long channelResetFaults() {
        return resets.failedResets();
    }
}
