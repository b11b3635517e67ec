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
import org.apache.ratis.protocol.exceptions.AlreadyClosedException;
import org.apache.ratis.protocol.exceptions.LeaderNotReadyException;
import org.apache.ratis.protocol.exceptions.NotLeaderException;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;

import java.io.IOException;
import java.net.ConnectException;
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

    LeaderAsks(String nodeId, RaftGroupId groupId, RaftClientRpc rpc, Supplier<RaftPeerId> leader,
               BooleanSupplier decidesHere, ScheduledExecutorService scheduler) {
        this(nodeId, groupId, rpc, leader, decidesHere, scheduler, GAP_MILLIS);
    }

    /** As above, waiting {@code gapMillis} for an ask that came late (tests). */
    LeaderAsks(String nodeId, RaftGroupId groupId, RaftClientRpc rpc, Supplier<RaftPeerId> leader,
               BooleanSupplier decidesHere, ScheduledExecutorService scheduler, long gapMillis) {
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
        return new Failures(sendFailures.get(), taskFailures.get(), listenerFailures.get());
    }

    /**
     * What went wrong with this node's asks of the leader and its leadership listeners, since start.
     *
     * @param sends sends to the leader that threw before anything left this node (the ask was resent)
     * @param tasks scheduled tasks (a resend, a gap timer) that failed
     * @param listeners leadership listeners that threw
     */
    record Failures(long sends, long tasks, long listeners) {
    }

    @Override
    public CompletableFuture<ObjectNode> ask(String service, ObjectNode body, Duration bound) {
        ObjectNode request = request(service, body);
        CompletableFuture<ObjectNode> answer = new CompletableFuture<>();
        attempt(request, ByteString.copyFrom(MeshJson.bytes(request)), answer, System.nanoTime() + bound.toNanos());
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

    private void attempt(ObjectNode request, ByteString bytes, CompletableFuture<ObjectNode> answer, long deadline) {
        RaftPeerId to = leader.get();
        if (to != null && to.toString().equals(nodeId)) {
            if (!leadsHere()) {
                retry(request, bytes, answer, deadline); // leads, not ready yet
                return;
            }
            // bounded like an ask sent to another node: a handler that never answers does not hold the asker
            long left = Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
            answered(arrived(request).copy().orTimeout(left, TimeUnit.MILLISECONDS), request, bytes, answer, deadline);
            return;
        }
        if (to == null) {
            retry(request, bytes, answer, deadline);
            return;
        }
        long left = Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
        RaftClientRequest r = RaftClientRequest.newBuilder().setClientId(clientId).setServerId(to)
                .setGroupId(groupId).setCallId(callIds.incrementAndGet()).setMessage(Message.valueOf(bytes))
                .setType(RaftClientRequest.readRequestType(true)).setTimeoutMs(left).build();
        CompletableFuture<RaftClientReply> sent;
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
            retry(request, bytes, answer, deadline);
            return;
        }
        if (sendFailing.getAndSet(false)) {
            LOG.log(System.Logger.Level.INFO, "sending asks to the leader " + to + " works again");
        }
        sent.orTimeout(left, TimeUnit.MILLISECONDS).whenComplete((reply, failure) -> {
            if (failure != null) {
                Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                        ? failure.getCause() : failure;
                if (neverArrived(cause)) {
                    rpc.handleException(to, cause, true); // the channel reconnects on the next request
                    retry(request, bytes, answer, deadline);
                } else {
                    answer.completeExceptionally(new IOException("the leader " + to + " did not answer: " + cause));
                }
            } else if (reply.getNotLeaderException() != null || reply.getLeaderNotReadyException() != null) {
                retry(request, bytes, answer, deadline);
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
                        : MeshJson.MAPPER.createObjectNode()), request, bytes, answer, deadline);
            }
        });
    }

    private void answered(CompletableFuture<ObjectNode> reply, ObjectNode request, ByteString bytes,
                          CompletableFuture<ObjectNode> answer, long deadline) {
        reply.whenComplete((json, failure) -> {
            if (failure != null) {
                answer.completeExceptionally(failure);
            } else if (json.path(NOT_LEADING).asBoolean(false)) {
                retry(request, bytes, answer, deadline); // refused before any handler saw it
            } else if (json.has("error")) {
                answer.completeExceptionally(new IOException("the leader refused the ask: " + json.path("error").asText()));
            } else {
                answer.complete(json.path("answer") instanceof ObjectNode o ? o : MeshJson.MAPPER.createObjectNode());
            }
        });
    }

    private void retry(ObjectNode request, ByteString bytes, CompletableFuture<ObjectNode> answer, long deadline) {
        if (System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(RETRY_MILLIS) - deadline > 0) {
            answer.completeExceptionally(new Unreached("no leader of the mesh took the " + request.path(SERVICE).asText()
                    + " ask in time"));
            return;
        }
        try {
            scheduler.schedule(() -> {
                try {
                    attempt(request, bytes, answer, deadline);
                } catch (RuntimeException e) {
                    failed("a resend of an ask", e);
                    answer.completeExceptionally(new IOException("the resend of the " + request.path(SERVICE).asText()
                            + " ask failed: " + LogRedactor.scrub(String.valueOf(e.getMessage()))));
                }
            }, RETRY_MILLIS, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // the node is closing: the ask is answered, never left waiting on a resend that cannot run
            failed("a resend of an ask", e);
            answer.completeExceptionally(new Unreached("the node closed before the " + request.path(SERVICE).asText()
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

    /** True when the ask may be sent again: the leader (or the channel to it) refused it before any handler saw it. */
    private static boolean neverArrived(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof NotLeaderException || t instanceof LeaderNotReadyException || t instanceof ConnectException
                    || t instanceof AlreadyClosedException) {
                return true;
            }
        }
        return false;
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
        if (!leadsHere()) {
            return CompletableFuture.completedFuture(notLeading());
        }
        String origin = request.path("origin").asText("");
        // the node's numbers restart with it: its order and its asks in flight are those of this life of it
        String life = request.hasNonNull(INCARNATION) ? origin + "@" + request.path(INCARNATION).asText() : origin;
        long seq = request.path("seq").asLong(-1);
        String key = life + "/" + seq;
        CompletableFuture<ObjectNode> answer;
        synchronized (this) {
            CompletableFuture<ObjectNode> first = inFlight.get(key);
            if (first != null) {
                return first; // the same ask again (its channel was reset): the first arrival answers both
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
                if (f != null) {
                    LOG.log(System.Logger.Level.WARNING, "the " + service + " ask of " + origin + " failed: "
                            + LogRedactor.scrub(String.valueOf(f.getMessage())));
                    answer.complete(MeshJson.MAPPER.createObjectNode().put("error", "the leader's " + service
                            + " failed"));
                } else {
                    ObjectNode wrapped = MeshJson.MAPPER.createObjectNode();
                    wrapped.set("answer", a);
                    answer.complete(wrapped);
                }
            });
        };
        inOrder(life, seq, new HeldAsk(run, refuse));
        return answer;
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
}
