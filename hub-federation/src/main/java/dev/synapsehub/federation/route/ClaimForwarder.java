package dev.synapsehub.federation.route;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.federation.FederationMetrics;
import dev.synapsehub.federation.link.PeerLink;
import dev.synapsehub.federation.link.PeerLinks;
import dev.synapsehub.federation.trust.PeerRoutes;
import dev.synapsehub.net.extension.ClusterLeader;
import dev.synapsehub.net.extension.HubServices;
import dev.synapsehub.net.protocol.Request;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The forwarding side of contract §11.3: decides, before the hub's claim path, whether a claim
 * is this hub's to decide. {@code local} goes on to the claim path; {@code remote} with a route
 * is forwarded to the owner as {@code multihub_claim_request} over the warm link to it and the
 * owner's verdict is relayed (granted, denied, {@code forward_error: "timeout"} past the 10 s
 * bound, the plain ownership refusal on any transport failure); everything else gets the plain
 * ownership refusal. Nothing here grants (INV-MH-1): only the owner does.
 */
public final class ClaimForwarder {
    private static final Logger LOG = LoggerFactory.getLogger(ClaimForwarder.class);
    private static final Set<String> ENVELOPE = Set.of("sender", "target", "type", "timestamp", "hub_id");

    private final HubServices hub;
    private final OwnershipResolver resolver;
    private final ForwardSettings settings;
    private final PeerLinks links;
    private final dev.synapsehub.federation.trust.PeerRouteSource routes;
    private final FederationMetrics metrics;
    /** The sends, one owner at a time each, so an owner that does not answer holds up no other owner's. */
    private final OwnerLanes lanes;
    /** A close that dropped queued forwards is logged once (each is answered). */
    private final java.util.concurrent.atomic.AtomicBoolean abandonLogged = new java.util.concurrent.atomic.AtomicBoolean();
    private final boolean sharedName;
    /**
     * The unkeyed forwards in flight, by owner, claimant and task. An unkeyed retry (the agent
     * reconnected, or sent it twice) that came while the first was still on its way would be
     * forwarded again and decided beside it; it waits for the first one's verdict instead and gets
     * the same answer. A keyed one is answered from the owner's ledger and is sent as it is.
     */
    private final Map<String, InFlight> inFlight = new java.util.concurrent.ConcurrentHashMap<>();

    /** On a mesh node, the cluster's leader, which alone holds the links to the owners; null on a single hub. */
    private final ClusterLeader cluster;
    /** The name under which the leader serves the cluster's forwards ({@link ClusterLeader#serve}). */
    public static final String SERVICE = "claim_forward";

    /**
     * {@code connector} runs the (possibly connecting) sends, off the event loops, at most one per
     * owner at a time: give it a thread for each owner that may have work at once (a pool that
     * grows), or a dead owner's connect makes the others wait.
     */
    public ClaimForwarder(HubServices hub, OwnershipResolver resolver, ForwardSettings settings, PeerLinks links,
                          FederationMetrics metrics, Executor connector) {
        this(hub, resolver, settings, links, metrics, connector, RouteLookup.fixedClaims(settings), false);
    }

    /**
     * @param routes the claim routes in force, asked before each forwarded claim (a peers file);
     *        while they cannot be known the claim is refused as a failed forward ({@code transport_failure})
     * @param sharedName true on a mesh node: the cluster's nodes forward under the same hub id,
     *        which the owner binds to one connection at a time (contract F9.4). Only the leader
     *        holds a link, but right after an election the owner may still hold the old
     *        leader's connection for a moment: a forward it refused {@code name_conflict} (it
     *        read nothing else of it) is sent again after a short pause, within the same bound
     */
    public ClaimForwarder(HubServices hub, OwnershipResolver resolver, ForwardSettings settings, PeerLinks links,
                          FederationMetrics metrics, Executor connector,
                          dev.synapsehub.federation.trust.PeerRouteSource routes, boolean sharedName) {
        this(hub, resolver, settings, links, metrics, connector, routes, sharedName, null);
    }

    /**
     * As above; with a {@code cluster} (a mesh node), every forward of this node's agents is
     * asked of the cluster's leader, which sends it over the cluster's one link to the owner
     * ({@link #serveForward}), and the answer is relayed here as on a single hub.
     */
    public ClaimForwarder(HubServices hub, OwnershipResolver resolver, ForwardSettings settings, PeerLinks links,
                          FederationMetrics metrics, Executor connector,
                          dev.synapsehub.federation.trust.PeerRouteSource routes, boolean sharedName,
                          ClusterLeader cluster) {
        this.cluster = cluster;
        this.routes = routes;
        this.hub = hub;
        this.resolver = resolver;
        this.settings = settings;
        this.links = links;
        this.metrics = metrics;
        this.lanes = new OwnerLanes(connector, dropped -> {
            if (dropped instanceof QueuedSend q) {
                abandoned(q.answer());
            }
        });
        this.sharedName = sharedName;
    }

    /**
     * A connector for the sends: a daemon thread for each owner with a send running (the lanes run
     * one per owner), idle threads ending after a minute. Bounded by the owners routes name.
     */
    public static java.util.concurrent.ExecutorService connector(String threadName) {
        return java.util.concurrent.Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, threadName);
            t.setDaemon(true);
            return t;
        });
    }

    /** True when the claim's namespace resolves {@code local} now; answers nothing. */
    public boolean resolvesLocal(Request claim) {
        return resolver.resolve(claim.sender(), hub.clock().nowSeconds()).ownership() == Ownership.LOCAL;
    }

    /** True when the claim is decided here; otherwise it is answered (or forwarded) and false. */
    public boolean claimIsLocal(Request claim) {
        Resolution res = resolver.resolve(claim.sender(), hub.clock().nowSeconds());
        if (res.ownership() == Ownership.LOCAL) {
            return true;
        }
        String taskId = claim.get("task_id") != null && claim.get("task_id").isTextual()
                ? claim.get("task_id").textValue().strip() : "";
        dev.synapsehub.federation.trust.PeerRoute route = null;
        if (res.ownership() == Ownership.REMOTE) {
            try {
                route = routes.current().claim().get(res.ownerHubId());
            } catch (java.io.IOException invalid) { // the peers file: logged once per change by the file
                metrics.forwardedClaims.incrementAndGet();
                metrics.forwardedClaimsDenied.incrementAndGet();
                metrics.forwardOutcomes.increment(res.ownerHubId(), "transport_failure");
                refuse(claim, taskId, res);
                return false;
            }
        }
        if (route == null) {
            metrics.ownershipRefusals.incrementAndGet();
            refuse(claim, taskId, res);
            return false;
        }
        metrics.forwardedClaims.incrementAndGet();
        dev.synapsehub.federation.trust.PeerRoute chosen = route;
        long deadline = System.nanoTime() + settings.bound().toNanos();
        InFlight verdict = keyed(claim) ? new InFlight(null, new CompletableFuture<>(), deadline)
                : inFlight(claim, taskId, chosen.name(), deadline);
        // the connection's later edge answers (an error for its next frame) wait for the verdict
        hub.outbox().answeredWhen(claim.session(), verdict.answer().whenCompleteAsync((a, f) ->
                deliver(claim, taskId, res, chosen.name(), a, f, verdict.deadline()), hub.outbox().executor()));
        if (verdict.joined()) {
            metrics.forwardedClaimsJoined.incrementAndGet();
            return false;
        }
        CompletableFuture<ObjectNode> sent = cluster != null ? viaLeader(claim, taskId, res, chosen, deadline)
                : forward(claim, taskId, res, chosen, deadline);
        sent.whenComplete((a, f) -> {
            if (f == null) {
                verdict.answer().complete(a);
            } else {
                verdict.answer().completeExceptionally(f);
            }
        });
        return false;
    }

    /**
     * A forward whose verdict answers a claim: one sent for it, or ({@code joined}) one already in
     * flight for an identical claim of the same agent and task, made by {@code deadline}.
     */
    private record InFlight(ObjectNode claim, CompletableFuture<ObjectNode> answer, long deadline, boolean joined) {
        InFlight(ObjectNode claim, CompletableFuture<ObjectNode> answer, long deadline) {
            this(claim, answer, deadline, false);
        }

        InFlight joining() {
            return new InFlight(claim, answer, deadline, true);
        }
    }

    /** The forward {@code claim} joins, or a new one registered for it. */
    private InFlight inFlight(Request claim, String taskId, String owner, long deadline) {
        ObjectNode same = comparable(claim.frame());
        String key = owner + '\n' + claim.sender() + '\n' + taskId;
        InFlight[] joined = new InFlight[1];
        InFlight mine = inFlight.compute(key, (k, prior) -> {
            if (prior != null && !prior.answer().isDone() && prior.claim().equals(same)) {
                joined[0] = prior.joining();
                return prior;
            }
            return new InFlight(same, new CompletableFuture<>(), deadline); // another request: sent on its own
        });
        if (joined[0] != null) {
            return joined[0];
        }
        mine.answer().whenComplete((a, f) -> inFlight.remove(key, mine));
        return mine;
    }

    private static boolean keyed(Request claim) {
        JsonNode key = claim.get("idem_key");
        return key != null && key.isTextual() && !key.textValue().isEmpty();
    }

    /** The claim as a request, without what differs between two sends of it (as the idempotency digest does). */
    private static ObjectNode comparable(ObjectNode frame) {
        ObjectNode copy = frame.deepCopy();
        copy.remove(java.util.List.of("token", "timestamp", "client_timestamp", "auth", "signature"));
        return copy;
    }

    /** The claim's {@code multihub_claim_request} to {@code owner}, the agent's frame (its idem_key too) inside. */
    private static ObjectNode requestFrame(Request claim, String taskId, Resolution res, String owner) {
        ObjectNode request = JsonNodeFactory.instance.objectNode();
        request.put("type", "multihub_claim_request");
        request.put("target", owner);
        request.put("namespace", res.namespace());
        request.put("claimant", claim.sender());
        request.put("task_id", taskId);
        ObjectNode original = claim.frame().deepCopy(); // the token was removed by the pipeline
        original.remove("token");
        request.set("claim", original);
        return request;
    }

    /**
     * A mesh node: the leader sends the forward over the cluster's one link to the owner. The
     * leader answers before the bound (its own send is bounded a little earlier), so the agent
     * hears within the same 10 s as on a single hub; no leader in time is a timeout.
     */
    private CompletableFuture<ObjectNode> viaLeader(Request claim, String taskId, Resolution res,
                                                    dev.synapsehub.federation.trust.PeerRoute to, long deadline) {
        long left = deadline - System.nanoTime();
        ObjectNode body = JsonNodeFactory.instance.objectNode();
        body.put("owner", to.name());
        body.put("bound_ms", Math.max(1, TimeUnit.NANOSECONDS.toMillis(left - Math.min(left / 10,
                TimeUnit.MILLISECONDS.toNanos(500)))));
        body.set("frame", requestFrame(claim, taskId, res, to.name()));
        return cluster.ask(SERVICE, body, Duration.ofNanos(Math.max(1, left)));
    }

    /**
     * The leader's side: sends one forward of any node (its own agents' too) over this node's
     * link to the owner, in the order they came; completes with {@code {"result": …}} or
     * {@code {"failure": "timeout"|"transport_failure", "detail": …}}. Never blocks.
     */
    public CompletableFuture<ObjectNode> serveForward(ObjectNode body) {
        CompletableFuture<ObjectNode> answer = new CompletableFuture<>();
        JsonNode frame = body.get("frame");
        if (!(frame instanceof ObjectNode request) || !body.path("bound_ms").canConvertToLong()) {
            return CompletableFuture.completedFuture(failure("transport_failure", "malformed forward"));
        }
        Resolution now = resolver.resolve(request.path("claimant").asText(""), hub.clock().nowSeconds());
        if (now.ownership() == Ownership.PARTITIONED) {
            // the asking node's edge may not have applied the partition record yet: the leader has
            ObjectNode refused = JsonNodeFactory.instance.objectNode();
            refused.put("refused", Ownership.PARTITIONED.wire());
            return CompletableFuture.completedFuture(refused);
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Math.max(1, body.path("bound_ms").asLong()));
        answer.whenComplete((a, f) -> {
            if (cluster != null && !cluster.leadsHere()) {
                links.retain(Set.of()); // lost the lead meanwhile: the new leader needs the owner's name binding
            }
        });
        String owner = body.path("owner").asText("");
        onConnector(owner, () -> send(owner, request, deadline, answer), answer);
        return answer;
    }

    /** A send queued on the connector, with the answer owed should the connector close before running it. */
    private record QueuedSend(Runnable send, CompletableFuture<ObjectNode> answer) implements Runnable {
        @Override
        public void run() {
            send.run();
        }
    }

    /** Queues {@code send} in {@code owner}'s lane; a connector already closed answers it as a transport failure at once. */
    private void onConnector(String owner, Runnable send, CompletableFuture<ObjectNode> answer) {
        try {
            lanes.execute(owner, new QueuedSend(send, answer));
        } catch (java.util.concurrent.RejectedExecutionException e) {
            abandoned(answer);
        }
    }

    /**
     * The node closes: the sends its connector dropped unrun ({@code ExecutorService.shutdownNow})
     * are answered as transport failures (the asking node refuses its agent plainly), never left
     * waiting until their bound.
     */
    public void abandon(java.util.List<Runnable> dropped) {
        for (Runnable r : dropped) {
            if (r instanceof QueuedSend q) {
                abandoned(q.answer());
            }
        }
        lanes.abandonQueued(); // the sends still waiting for their owner's turn
    }

    private void abandoned(CompletableFuture<ObjectNode> answer) {
        if (answer.complete(failure("transport_failure", "the node closed before sending the forward"))
                && !abandonLogged.getAndSet(true)) {
            LOG.warn("The node closed with claim forwards not yet sent: answered as transport failures");
        }
    }

    private static ObjectNode failure(String kind, String detail) {
        ObjectNode f = JsonNodeFactory.instance.objectNode();
        f.put("failure", kind);
        f.put("detail", detail == null ? "" : detail);
        return f;
    }

    /** On the connector: sends {@code request} to {@code owner} over the link and completes {@code answer}. */
    private void send(String owner, ObjectNode request, long deadline, CompletableFuture<ObjectNode> answer) {
        send(owner, request, deadline, answer, true);
    }

    /**
     * Sends {@code request} to {@code owner} over the link and completes {@code answer}. With
     * {@code mayConnect} false (an event loop's send) it only sends over a connection already open
     * and returns false, having done nothing, when there is none.
     */
    private boolean send(String owner, ObjectNode request, long deadline, CompletableFuture<ObjectNode> answer,
                         boolean mayConnect) {
        if (answer.isDone()) {
            return true; // answered by the bound while it waited its turn: a grant made now would reach nobody
        }
        if (deadline - System.nanoTime() <= 0) {
            answer.complete(failure("timeout", "the bound passed before the forward's turn to be sent to " + owner));
            return true;
        }
        dev.synapsehub.federation.trust.PeerRoute to;
        try {
            to = RouteLookup.forwardRoute(routes, PeerRoutes::claim, "--claim-peer", owner);
        } catch (RouteLookup.NoRoute none) {
            answer.complete(failure("transport_failure", none.getMessage()));
            return true;
        }
        ClaimRoute route = new ClaimRoute(to.name(), to.uri(), to.pin());
        String taskId = request.path("task_id").asText("");
        PeerLink link;
        try {
            // an event loop's send only uses a link already held: making one may close a stale one, which waits
            link = mayConnect ? links.link(route.hubId(), route.uri(), settings.tlsFor(route), to.token())
                    : links.held(route.uri(), settings.tlsFor(route), to.token());
        } catch (RuntimeException e) {
            answer.complete(failure("transport_failure", e.getMessage()));
            return true;
        }
        if (link == null) {
            return false;
        }
        String claimant = request.path("claimant").asText("");
        java.util.function.Predicate<ObjectNode> verdict = reply -> answers(reply, taskId, claimant);
        Duration bound = Duration.ofNanos(Math.max(1, deadline - System.nanoTime()));
        CompletableFuture<ObjectNode> sent = mayConnect
                ? link.request(request.deepCopy(), "multihub_claim_result", verdict, bound)
                : link.requestIfConnected(request.deepCopy(), "multihub_claim_result", verdict, bound);
        if (sent == null) {
            return false; // no warm connection: the connector sends it
        }
        sent.whenComplete((result, failure) -> {
            if (failure == null) {
                ObjectNode ok = JsonNodeFactory.instance.objectNode();
                ok.set("result", result);
                answer.complete(ok);
                return;
            }
            Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                    ? failure.getCause() : failure;
            boolean nameTaken = sharedName && nameTaken(cause);
            if (nameTaken) {
                long pause = ThreadLocalRandom.current().nextLong(50, 150);
                if (deadline - System.nanoTime() > TimeUnit.MILLISECONDS.toNanos(pause)) {
                    metrics.forwardOutcomes.increment(route.hubId(), "name_busy_retry");
                    CompletableFuture.delayedExecutor(pause, TimeUnit.MILLISECONDS, task -> onConnector(owner, task, answer))
                            .execute(() -> send(owner, request, deadline, answer));
                    return;
                }
            }
            answer.complete(cause instanceof TimeoutException || nameTaken ? failure("timeout", cause.getMessage())
                    : failure("transport_failure", cause.getMessage()));
        });
        return true;
    }

    /**
     * Whether {@code reply} is the verdict on {@code claimant}'s forwarded claim of {@code taskId}.
     * The frame names no request, so two agents' claims of one task wait on a link side by side; a
     * grant names its owner, and is only ever taken as the verdict on that owner's request. Were an
     * {@code error} meant for one of them taken for the other's (the link gives it to the oldest
     * request), the grant left over still cannot reach an agent it was not made for.
     */
    static boolean answers(JsonNode reply, String taskId, String claimant) {
        return taskId.equals(reply.path("task_id").asText())
                && (!reply.path("granted").asBoolean(false) || claimant.equals(reply.path("grant").path("owner").asText(null)));
    }

    /** Answers the agent from the sender's answer: the owner's verdict, or the timeout or plain refusal. */
    private void deliver(Request claim, String taskId, Resolution res, String owner, ObjectNode answer,
                         Throwable failure, long deadline) {
        String kind;
        String detail;
        if (failure != null) {
            Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                    ? failure.getCause() : failure;
            // no leader took it, or none answered, by the bound: the agent hears "timeout", as when the owner is slow
            kind = cause instanceof ClusterLeader.Unreached || System.nanoTime() - deadline >= 0 ? "timeout"
                    : "transport_failure";
            detail = String.valueOf(cause.getMessage());
        } else if (answer.get("result") instanceof ObjectNode result) {
            relay(claim, taskId, res, result);
            return;
        } else if (Ownership.PARTITIONED.wire().equals(answer.path("refused").asText())) {
            metrics.forwardedClaimsDenied.incrementAndGet();
            metrics.forwardOutcomes.increment(owner, "partitioned");
            refuse(claim, taskId, new Resolution(Ownership.PARTITIONED, res.namespace(), res.ownerHubId()));
            return;
        } else {
            kind = "timeout".equals(answer.path("failure").asText()) ? "timeout" : "transport_failure";
            detail = answer.path("detail").asText("");
        }
        metrics.forwardedClaimsDenied.incrementAndGet();
        if ("timeout".equals(kind)) {
            metrics.forwardedClaimTimeouts.incrementAndGet();
            metrics.forwardOutcomes.increment(owner, "timeout");
            LOG.warn("Forwarding claim '{}' for {} to owner {} timed out after {} s", taskId, claim.sender(), owner,
                    settings.bound().toSeconds());
            ObjectNode f = ownershipRefusal(claim, taskId, res);
            f.put("ownership", Ownership.REMOTE.wire());
            f.put("forward_error", "timeout");
            send(claim, f);
        } else {
            metrics.forwardOutcomes.increment(owner, "transport_failure");
            LOG.warn("Forwarding claim '{}' for {} to owner {} failed: {}", taskId, claim.sender(), owner, detail);
            refuse(claim, taskId, res);
        }
    }

    /**
     * A single hub (or a mesh node without a cluster): sends over this hub's own link, on the
     * connector. Queued through {@link #onConnector}, so a connector that refuses it (the hub is
     * closing) answers the agent the plain refusal of a failed forward at once, never leaves it waiting.
     */
    private CompletableFuture<ObjectNode> forward(Request claim, String taskId, Resolution res,
                                                  dev.synapsehub.federation.trust.PeerRoute to, long deadline) {
        CompletableFuture<ObjectNode> answer = new CompletableFuture<>();
        // the agent hears by the bound whatever the connector does: a connection to an owner whose host does not
        // answer can hold its lane past it (connect, then the welcome), and that owner's other sends wait behind it
        answer.completeOnTimeout(failure("timeout", "no verdict from " + to.name() + " within the "
                        + settings.bound().toSeconds() + " s bound (connecting, queued or waiting for the owner)"),
                Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        ObjectNode request = requestFrame(claim, taskId, res, to.name());
        // the link's own bound runs from the send on a single hub, from the claim for a shared name
        long linkDeadline = sharedName ? deadline : System.nanoTime() + settings.bound().toNanos();
        // over a warm link with nothing of this owner's waiting it goes out from here, else from the connector
        if (!lanes.tryHere(to.name(), () -> sendHere(to.name(), request, linkDeadline, answer))) {
            onConnector(to.name(), () -> send(to.name(), request, linkDeadline, answer), answer);
        }
        return answer;
    }

    /** {@link #send} from an event loop, over a warm connection only; a fault is answered, not thrown at the loop. */
    private boolean sendHere(String owner, ObjectNode request, long deadline, CompletableFuture<ObjectNode> answer) {
        try {
            return send(owner, request, deadline, answer, false);
        } catch (RuntimeException fault) {
            // counted when the agent is answered (transport_failure)
            LOG.error("fault sending a forwarded claim to owner {}; answered as a failed forward", owner, fault);
            answer.complete(failure("transport_failure", String.valueOf(fault.getMessage())));
            return true;
        }
    }

    private void relay(Request claim, String taskId, Resolution res, ObjectNode result) {
        JsonNode granted = result.get("granted");
        JsonNode grant = result.get("grant");
        String owner = text(result, "owner_hub_id");
        if (granted == null || !granted.isBoolean() || text(result, "task_id") == null || text(result, "namespace") == null
                || owner == null || (granted.booleanValue() && (grant == null || !grant.isObject()))) {
            metrics.forwardedClaimsDenied.incrementAndGet();
            metrics.forwardOutcomes.increment(res.ownerHubId(), "malformed");
            LOG.warn("Owner {} answered claim '{}' with a malformed multihub_claim_result", res.ownerHubId(), taskId);
            refuse(claim, taskId, res);
            return;
        }
        double now = hub.clock().nowSeconds();
        if (granted.booleanValue()) {
            metrics.forwardedClaimsGranted.incrementAndGet();
            metrics.forwardOutcomes.increment(res.ownerHubId(), "granted");
            ObjectNode f = hub.frames().envelope(claim.sender(), "claim_granted", grant.path("payload").asText(""), now);
            for (Iterator<Map.Entry<String, JsonNode>> it = grant.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> m = it.next();
                if (!ENVELOPE.contains(m.getKey()) && !"payload".equals(m.getKey())) {
                    f.set(m.getKey(), m.getValue());
                }
            }
            send(claim, f);
        } else {
            metrics.forwardedClaimsDenied.incrementAndGet();
            metrics.forwardOutcomes.increment(res.ownerHubId(), "denied");
            JsonNode detail = result.get("detail");
            ObjectNode f = hub.frames().envelope(claim.sender(), "claim_denied",
                    detail != null && detail.isTextual() ? detail.textValue() : "", now);
            f.put("task_id", taskId);
            f.put("namespace", res.namespace());
            f.put("owner_hub_id", owner);
            send(claim, f);
        }
    }

    /** The plain ownership refusal of §11.3: task_id, namespace, ownership, owner_hub_id; no reason_code. */
    private void refuse(Request claim, String taskId, Resolution res) {
        send(claim, ownershipRefusal(claim, taskId, res));
    }

    private ObjectNode ownershipRefusal(Request claim, String taskId, Resolution res) {
        ObjectNode f = hub.frames().envelope(claim.sender(), "claim_denied", "claim refused: this hub does not own "
                + "namespace '" + res.namespace() + "' (" + res.ownership().wire() + ")", hub.clock().nowSeconds());
        f.put("task_id", taskId);
        f.put("namespace", res.namespace());
        f.put("ownership", res.ownership().wire());
        if (res.ownerHubId() == null) {
            f.putNull("owner_hub_id");
        } else {
            f.put("owner_hub_id", res.ownerHubId());
        }
        return f;
    }

    private void send(Request claim, ObjectNode frame) {
        hub.outbox().sendInOrder(claim.session(), hub.frames().write(frame));
    }

    /**
     * The owner refused this connection's binding of the hub id (another node of the cluster holds
     * it): answered {@code name_conflict}, or closed with its code 4009 under a request sent with
     * it, or closed before the request went out. The owner reads no frame of an unbound
     * connection (and none not sent), so the claim was not decided.
     */
    private static boolean nameTaken(Throwable cause) {
        String m = cause.getMessage();
        return cause instanceof PeerLink.NotSent || m != null && (cause instanceof PeerLink.Answered
                && m.contains("answered name_conflict") || cause instanceof java.io.IOException
                && m.contains("(4009 name conflict)"));
    }

    private static String text(JsonNode o, String field) {
        JsonNode v = o.get(field);
        return v != null && v.isTextual() && !v.textValue().isEmpty() ? v.textValue() : null;
    }
}
