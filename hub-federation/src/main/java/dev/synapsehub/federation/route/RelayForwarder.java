package dev.synapsehub.federation.route;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.federation.AuditJournal;
import dev.synapsehub.federation.LabelledCounters;
import dev.synapsehub.federation.LocalOperator;
import dev.synapsehub.federation.link.PeerLink;
import dev.synapsehub.federation.link.PeerLinks;
import dev.synapsehub.federation.trust.PeerRoutes;
import dev.synapsehub.net.extension.HubServices;
import dev.synapsehub.net.protocol.PeerVerdictFrames;
import dev.synapsehub.net.protocol.Request;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The forwarding side of an operator relay ({@code --relay-peer HUB_ID=URI}, contract A5.1,
 * §11.5, F6): an {@code operator_relay_request} from an operator on this machine for a
 * namespace another hub owns goes to that owner over the warm, mutually authenticated link
 * (this hub's client certificate, the route's pin), and the owner's {@code operator_relay_result}
 * comes back to the requester. This hub decides nothing: the owner runs every gate, and sees
 * this hub as the requesting peer ({@code origin_hub_id} is this hub's id). {@code idem_key}
 * travels unchanged, so a retry after a timeout is answered from the owner's ledger.
 *
 * <p>Only requests from a loopback connection are forwarded: the owner trusts this hub's
 * certificate, so relaying for anyone who can reach this hub would lend that trust out. A peer
 * hub that this hub's serving policy authorises is never relayed onwards either (relays do not
 * chain). Any other request, and every namespace without a route, is left to the owning side
 * ({@link RelayServer}), which refuses it as the contract says.
 */
public final class RelayForwarder {
    private static final Logger LOG = LoggerFactory.getLogger(RelayForwarder.class);
    /** The request members forwarded; anything else the requester added stays here. */
    private static final String[] MEMBERS = {"action", "namespace", "task_id", "operator", "reason", "break_glass",
            "idem_key"};

    private final HubServices hub;
    private final OwnershipResolver resolver;
    private final dev.synapsehub.federation.trust.ServingTrust trust;
    private final ForwardSettings routes;
    private final dev.synapsehub.federation.trust.PeerRouteSource source;
    private final PeerLinks links;
    /** The sends, one owner at a time each, so an owner that does not answer holds up no other owner's relays. */
    private final OwnerLanes lanes;
    /** A close that dropped queued relays is logged once (each is answered). */
    private final java.util.concurrent.atomic.AtomicBoolean abandonLogged = new java.util.concurrent.atomic.AtomicBoolean();
    private final AuditJournal audit;
    /** Forwarded relays by owning hub and outcome. */
    private final LabelledCounters outcomes = new LabelledCounters("synapse_operator_relays_forwarded_total",
            "Operator relays forwarded to the owning hub, by owner and outcome: applied, pending, refused (by the "
                    + "owner), timeout, transport_failure, malformed (result), decided_here (the cluster's leader "
                    + "resolved the namespace otherwise: answered by this hub's owning side).", "owner", "outcome");
    private final AtomicLong auditFailures = new AtomicLong();
    /** On a mesh node, the cluster's leader, which alone holds the links to the owners; null on a single hub. */
    private dev.synapsehub.net.extension.ClusterLeader cluster;
    /** On a mesh node, the owning side that decides a relay the leader would not send (as a single hub does). */
    private java.util.function.Consumer<Request> decidedHere;
    /** The name under which the leader serves the cluster's relays ({@link #serveRelay}). */
    public static final String SERVICE = "operator_relay_forward";

    /**
     * {@code connector} runs the (possibly connecting) sends, off the event loops, at most one per
     * owner at a time: give it a thread for each owner that may have work at once (a pool that
     * grows, {@link ClaimForwarder#connector}), or a dead owner's connect makes the others wait.
     */
    public RelayForwarder(HubServices hub, OwnershipResolver resolver, dev.synapsehub.federation.trust.ServingTrust trust,
                          ForwardSettings routes, PeerLinks links, Executor connector, AuditJournal audit) {
        this(hub, resolver, trust, routes, links, connector, audit, RouteLookup.fixedRelays(routes));
    }

    /**
     * {@code source}: the relay routes in force, asked before each relay (a peers file); while
     * they cannot be known a relay for a namespace another hub owns is refused
     * ({@code owner_unreachable}, outcome {@code transport_failure}).
     */
    public RelayForwarder(HubServices hub, OwnershipResolver resolver, dev.synapsehub.federation.trust.ServingTrust trust,
                          ForwardSettings routes, PeerLinks links, Executor connector, AuditJournal audit,
                          dev.synapsehub.federation.trust.PeerRouteSource source) {
        this.source = source;
        this.hub = hub;
        this.resolver = resolver;
        this.trust = trust;
        this.routes = routes;
        this.links = links;
        this.lanes = new OwnerLanes(connector, dropped -> {
            if (dropped instanceof QueuedRelay q) {
                q.unsent().run();
            }
        });
        this.audit = audit;
    }

    /**
     * On a mesh node: every relay this node takes is asked of the cluster's leader, which sends it
     * over the cluster's one link to the owner ({@link #serveRelay}; the owner binds the cluster's
     * hub id to one connection, contract F9.4), and the owner's answer comes back here to the
     * operator as on a single hub. A relay the leader finds no longer the owner's (it applied a
     * partition or an ownership change this node has not yet) is handed to {@code owningSide},
     * which answers it as a single hub's owning side does. Call before the hub serves.
     */
    public RelayForwarder viaLeader(dev.synapsehub.net.extension.ClusterLeader leader,
                                    java.util.function.Consumer<Request> owningSide) {
        this.cluster = leader;
        this.decidedHere = owningSide;
        return this;
    }

    /**
     * Takes {@code r} over when it is a well-formed relay from this machine for a namespace owned
     * by a hub this one has a relay route to: it is forwarded and answered later. False: the
     * owning side decides it here.
     */
    public boolean forwards(Request r) {
        if ((routes.routes().isEmpty() && !source.reloads()) || !RelayServer.wellFormed(r)
                || !LocalOperator.onThisMachine(r.session().remoteHost())) {
            return false;
        }
        if (trust.configured() && trust.decide(r.sender(), r.session().peerCertificateChain(),
                hub.clock().nowSeconds()).allowed()) {
            return false; // a peer hub's relay is decided here as the owning side; relays never chain
        }
        String namespace = r.get("namespace").textValue();
        Resolution res = resolver.resolve(namespace + "/operator-relay", hub.clock().nowSeconds());
        if (res.ownership() != Ownership.REMOTE) {
            return false;
        }
        dev.synapsehub.federation.trust.PeerRoute to;
        try {
            to = source.current().relay().get(res.ownerHubId());
        } catch (java.io.IOException invalid) { // the peers file does not validate: refused, never sent on old routes
            outcomes.increment(res.ownerHubId(), "transport_failure");
            LOG.warn("Relaying operator {} of task '{}' to owner {} refused: {}", r.get("action").textValue(),
                    r.get("task_id").textValue(), res.ownerHubId(), invalid.getMessage());
            answer(r, res.ownerHubId(), false, false, "owner_unreachable", "transport_failure");
            return true;
        }
        if (to == null) {
            return false;
        }
        ClaimRoute route = new ClaimRoute(to.name(), to.uri(), to.pin());
        String token = to.token();
        if (cluster != null) {
            try {
                askLeader(r, route);
            } catch (RuntimeException e) {
                internalFault(r, route, e);
            }
            return true;
        }
        RelayTurn turn = new RelayTurn();
        hub.outbox().answeredWhen(r.session(), turn.handedOn()); // the connection's later edge answers wait for it
        try {
            lanes.execute(route.hubId(), new QueuedRelay(() -> {
                if (!turn.send()) {
                    return; // answered at the bound while it waited its turn: never sent
                }
                try {
                    forward(r, route, token, turn);
                } catch (RuntimeException e) { // nothing else would see it: answer here
                    turn.answer(() -> internalFault(r, route, e));
                }
            }, () -> turn.answer(() -> closedUnsent(r, route))));
        } catch (java.util.concurrent.RejectedExecutionException e) { // the hub is stopping
            turn.answer(() -> internalFault(r, route, e));
            return true;
        }
        // the operator hears by the bound, whatever the owner's lane does: a relay behind one whose owner's host
        // never answers would otherwise wait for each connect before it (10 s each) and then its own
        java.util.concurrent.CompletableFuture.delayedExecutor(routes.bound().toNanos(),
                java.util.concurrent.TimeUnit.NANOSECONDS, hub.outbox().executor()).execute(() -> boundPassed(r, route, turn));
        return true;
    }

    /**
     * The bound passed without the owner's answer: a relay still waiting for its owner's turn was
     * never written (certainly not applied; it is now never sent), one being sent may have been
     * (unknown: a retry with the same {@code idem_key} is answered from the owner's ledger).
     */
    private void boundPassed(Request r, ClaimRoute route, RelayTurn turn) {
        boolean unsent = turn.dropQueued(); // atomically: a relay answered unsent is never sent after all
        if (unsent) {
            turn.answered(() -> timedOut(r, route, true));
        } else {
            turn.answer(() -> timedOut(r, route, false)); // nothing when answered in time
        }
    }

    /** The bound passed: the operator is told the relay was not sent ({@code unsent}) or its outcome is unknown. */
    private void timedOut(Request r, ClaimRoute route, boolean unsent) {
        String outcome = unsent ? "transport_failure" : "timeout";
        outcomes.increment(route.hubId(), outcome);
        LOG.warn("Relaying operator {} of task '{}' to owner {}: no answer within the {} s bound ({})",
                r.get("action").textValue(), r.get("task_id").textValue(), route.hubId(), routes.bound().toSeconds(),
                unsent ? "still queued behind earlier relays to that owner, now never sent" : "sent or being sent");
        try {
            answer(r, route.hubId(), false, false, unsent ? "owner_unreachable" : "owner_timeout", outcome);
        } catch (RuntimeException e) {
            internalFault(r, route, e);
        }
    }

    /**
     * One relay's way through its owner's lane: queued, then being sent, answered once: by the
     * owner's verdict, a failure, the close or the bound, whichever comes first.
     */
    private static final class RelayTurn {
        private static final int QUEUED = 0;
        private static final int SENDING = 1;
        private static final int ANSWERED = 2;
        private final java.util.concurrent.atomic.AtomicInteger state = new java.util.concurrent.atomic.AtomicInteger();

        /** Its turn came: true when it is to be sent (not answered meanwhile). */
        boolean send() {
            return state.compareAndSet(QUEUED, SENDING);
        }

        /** True when it was still waiting for its turn: it is answered now and never sent. */
        boolean dropQueued() {
            return state.compareAndSet(QUEUED, ANSWERED);
        }

        /** Completes once the relay was answered (its frame handed to the outbox), however it ended. */
        private final java.util.concurrent.CompletableFuture<Void> handedOn = new java.util.concurrent.CompletableFuture<>();

        /** Runs {@code answering} when this caller is the one that answers the relay; true then. */
        boolean answer(Runnable answering) {
            if (state.getAndSet(ANSWERED) == ANSWERED) {
                return false;
            }
            answered(answering);
            return true;
        }

        /** Runs {@code answering} for the caller that took the answer ({@link #dropQueued}), then marks it handed on. */
        void answered(Runnable answering) {
            try {
                answering.run();
            } finally {
                handedOn.complete(null);
            }
        }

        java.util.concurrent.CompletableFuture<Void> handedOn() {
            return handedOn;
        }
    }

    /** A relay this hub failed to forward through no fault of the owner: logged, counted, answered. */
    private void internalFault(Request r, ClaimRoute route, RuntimeException e) {
        outcomes.increment(route.hubId(), "internal_fault");
        LOG.error("Relaying operator {} of task '{}' to owner {} failed inside this hub", r.get("action").textValue(),
                r.get("task_id").textValue(), route.hubId(), e);
        answer(r, route.hubId(), false, false, "forward_failed", "internal_fault");
    }

    /**
     * A mesh node: the leader sends the relay; its answer (the owner's result, or why none came)
     * is settled here as a single hub settles its own send. The leader's send is bounded a little
     * earlier than the ask (a tenth, at most 0.5 s), so its answer reaches this node in time.
     */
    private void askLeader(Request r, ClaimRoute route) {
        long bound = routes.bound().toNanos();
        ObjectNode body = JsonNodeFactory.instance.objectNode();
        body.put("owner", route.hubId());
        body.put("bound_ms", Math.max(1, java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(bound
                - Math.min(bound / 10, java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(500)))));
        body.set("frame", requestFrame(r, route.hubId()));
        String action = r.get("action").textValue();
        String taskId = r.get("task_id").textValue();
        // the connection's later edge answers (an error for its next frame) wait for this one
        hub.outbox().answeredWhen(r.session(), cluster.ask(SERVICE, body, routes.bound()).whenCompleteAsync((answer, failure) -> {
            try {
                if (failure == null && answer.has("decided_here")) {
                    // the leader resolves the namespace otherwise than this node yet: as on a single hub
                    outcomes.increment(route.hubId(), "decided_here");
                    LOG.info("Operator {} of task '{}' not relayed: the cluster's leader resolves '{}' as {}, not owned "
                            + "by {}; decided here", action, taskId, r.get("namespace").textValue(),
                            answer.path("decided_here").asText(), route.hubId());
                    decidedHere.accept(r);
                    return;
                }
                if (failure != null) {
                    Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                            ? failure.getCause() : failure;
                    // no leader took it: never sent, so certainly not applied; any other failure leaves it unknown
                    boolean unsent = cause instanceof dev.synapsehub.net.extension.ClusterLeader.Unreached;
                    outcomes.increment(route.hubId(), unsent ? "transport_failure" : "timeout");
                    LOG.warn("Relaying operator {} of task '{}' to owner {} through the cluster's leader failed: {}",
                            action, taskId, route.hubId(), cause.toString());
                    answer(r, route.hubId(), false, false, unsent ? "owner_unreachable" : "owner_timeout",
                            unsent ? "transport_failure" : "timeout");
                } else if (answer.get("result") instanceof ObjectNode result) {
                    relay(r, route, result);
                } else {
                    boolean timeout = "timeout".equals(answer.path("failure").asText());
                    outcomes.increment(route.hubId(), timeout ? "timeout" : "transport_failure");
                    LOG.warn("Relaying operator {} of task '{}' to owner {} failed on the cluster's leader: {}",
                            action, taskId, route.hubId(), answer.path("detail").asText(""));
                    answer(r, route.hubId(), false, false, timeout ? "owner_timeout" : "owner_unreachable",
                            timeout ? "timeout" : "transport_failure");
                }
            } catch (RuntimeException e) { // nothing else would see it: the returned future is dropped
                internalFault(r, route, e);
            }
        }, hub.outbox().executor()));
    }

    /**
     * The leader's side: sends one relay of any node (its own operators' too) over this node's link
     * to the owner, on the connector; completes with {@code {"result": …}} or {@code {"failure":
     * "timeout"|"transport_failure", "detail": …}}, or {@code {"decided_here": ownership}} when
     * the leader does not resolve the namespace as the same owner's (INV-CR-4: the asking node
     * may not have applied a partition the leader has; a single hub would not send it, so nor
     * does the leader). {@code transport_failure} only when nothing was written to the owner;
     * once the frame may have gone out, any failure is a {@code timeout} (unknown: a retry with
     * the same {@code idem_key} is answered from the owner's ledger). The route is this node's
     * own (its peers file or flags). Never blocks.
     */
    public java.util.concurrent.CompletableFuture<ObjectNode> serveRelay(ObjectNode body) {
        if (!(body.get("frame") instanceof ObjectNode request) || !body.path("bound_ms").canConvertToLong()
                || !request.path("task_id").isTextual() || !request.path("namespace").isTextual()
                || !request.path("action").isTextual()) {
            return java.util.concurrent.CompletableFuture.completedFuture(relayFailure("transport_failure",
                    "malformed relay"));
        }
        String owner = body.path("owner").asText("");
        Resolution now = resolver.resolve(request.path("namespace").asText() + "/operator-relay",
                hub.clock().nowSeconds());
        if (now.ownership() != Ownership.REMOTE || !owner.equals(now.ownerHubId())) {
            ObjectNode here = JsonNodeFactory.instance.objectNode();
            here.put("decided_here", now.ownership().wire());
            return java.util.concurrent.CompletableFuture.completedFuture(here);
        }
        java.util.concurrent.CompletableFuture<ObjectNode> answer = new java.util.concurrent.CompletableFuture<>();
        answer.whenComplete((a, f) -> {
            if (cluster != null && !cluster.leadsHere()) {
                links.retain(java.util.Set.of()); // lost the lead meanwhile: the new leader needs the owner's name
            }
        });
        java.time.Duration bound = java.time.Duration.ofMillis(Math.max(1, body.path("bound_ms").asLong()));
        RelayTurn turn = new RelayTurn();
        try {
            lanes.execute(owner, new QueuedRelay(() -> {
                if (!turn.send()) {
                    return; // answered at the bound while it waited its turn: never sent
                }
                try {
                    sendForCluster(owner, request, bound, answer);
                } catch (RuntimeException e) { // thrown before the frame was written (links.link): never sent
                    answer.complete(relayFailure("transport_failure", e.toString()));
                }
            }, () -> answer.complete(relayFailure("transport_failure", "the node closed before sending the relay"))));
        } catch (java.util.concurrent.RejectedExecutionException e) {
            answer.complete(relayFailure("transport_failure", "the leader is stopping"));
            return answer;
        }
        // one still waiting for its owner's turn at the bound is never sent (its own send is bounded once it runs)
        java.util.concurrent.CompletableFuture.delayedExecutor(bound.toNanos(), java.util.concurrent.TimeUnit.NANOSECONDS,
                hub.outbox().executor()).execute(() -> {
                    if (turn.dropQueued()) {
                        answer.complete(relayFailure("transport_failure", "the bound passed while the relay waited "
                                + "behind earlier relays to " + owner + "; it was not sent"));
                    }
                });
        return answer;
    }

    /** A relay send queued in its owner's lane, with the answer owed should the connector close before running it. */
    private record QueuedRelay(Runnable send, Runnable unsent) implements Runnable {
        @Override
        public void run() {
            send.run();
        }
    }

    /**
     * The hub closes: the relay sends its connector dropped unrun ({@code ExecutorService.shutdownNow},
     * {@code dropped}) and those still waiting for their owner's turn are answered as transport
     * failures (never written, so the owner never saw them), not left waiting until the asking
     * node's bound or for ever.
     */
    public void abandon(java.util.List<Runnable> dropped) {
        for (Runnable r : dropped) {
            if (r instanceof QueuedRelay q) {
                q.unsent().run();
            }
        }
        lanes.abandonQueued(); // the lanes' turns are what the connector held: their sends wait in the lanes
    }

    /** A relay of this hub's own operator that the closing hub never sent: answered, counted, logged once. */
    private void closedUnsent(Request r, ClaimRoute route) {
        outcomes.increment(route.hubId(), "transport_failure");
        if (!abandonLogged.getAndSet(true)) {
            LOG.warn("The hub closed with operator relays not yet sent: answered owner_unreachable");
        }
        try {
            answer(r, route.hubId(), false, false, "owner_unreachable", "transport_failure");
        } catch (RuntimeException closing) { // the rest of the close goes on
            LOG.debug("Answering an unsent relay at close failed", closing);
        }
    }

    private void sendForCluster(String owner, ObjectNode request, java.time.Duration bound,
                                java.util.concurrent.CompletableFuture<ObjectNode> answer) {
        if (cluster != null && !cluster.leadsHere()) { // a link opened now would take the owner's name from the leader
            answer.complete(relayFailure("transport_failure", "this node no longer leads the cluster"));
            return;
        }
        dev.synapsehub.federation.trust.PeerRoute to;
        try {
            to = RouteLookup.forwardRoute(source, PeerRoutes::relay, "--relay-peer", owner);
        } catch (RouteLookup.NoRoute none) {
            answer.complete(relayFailure("transport_failure", none.getMessage()));
            return;
        }
        ClaimRoute route = new ClaimRoute(to.name(), to.uri(), to.pin());
        String taskId = request.path("task_id").asText();
        String namespace = request.path("namespace").asText();
        String action = request.path("action").asText();
        PeerLink link = links.link(route.hubId(), route.uri(), routes.tlsFor(route), to.token());
        ObjectNode frame = request.deepCopy();
        frame.remove("sender"); // set by the link as it writes the frame: the mark that it may have gone out
        link.request(frame, "operator_relay_result", reply -> taskId.equals(reply.path("task_id").asText())
                && namespace.equals(reply.path("namespace").asText()) && action.equals(reply.path("action").asText()),
                bound).whenComplete((result, failure) -> {
            if (failure == null) {
                ObjectNode ok = JsonNodeFactory.instance.objectNode();
                ok.set("result", result);
                answer.complete(ok);
                return;
            }
            Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                    ? failure.getCause() : failure;
            // The link stamps the frame's sender once connected, just before writing it: unstamped, or
            // NotSent, the owner never read it. Anything else (a reply that never came, the link closed
            // under it when this node lost the lead) leaves the outcome unknown: a timeout, so the
            // operator retries with the same idem_key rather than resending as if nothing happened.
            boolean unsent = !frame.has("sender") || cause instanceof PeerLink.NotSent;
            answer.complete(relayFailure(unsent ? "transport_failure" : "timeout", cause.getMessage()));
        });
    }

    private static ObjectNode relayFailure(String kind, String detail) {
        ObjectNode f = JsonNodeFactory.instance.objectNode();
        f.put("failure", kind);
        f.put("detail", detail == null ? "" : detail);
        return f;
    }

    /** The {@code operator_relay_request} sent to {@code owner}: the requester's members and this hub's id. */
    private ObjectNode requestFrame(Request r, String owner) {
        ObjectNode request = JsonNodeFactory.instance.objectNode();
        request.put("type", "operator_relay_request");
        request.put("target", owner);
        for (String m : MEMBERS) {
            JsonNode v = r.get(m);
            if (v != null && !v.isNull()) {
                request.set(m, v);
            }
        }
        request.put("origin_hub_id", hub.frames().hubId()); // the owner's audit names where it came from
        return request;
    }

    private void forward(Request r, ClaimRoute route, String token, RelayTurn turn) {
        ObjectNode request = JsonNodeFactory.instance.objectNode();
        request.put("type", "operator_relay_request");
        request.put("target", route.hubId());
        for (String m : MEMBERS) {
            JsonNode v = r.get(m);
            if (v != null && !v.isNull()) {
                request.set(m, v);
            }
        }
        request.put("origin_hub_id", hub.frames().hubId()); // the owner's audit names where it came from
        String taskId = r.get("task_id").textValue();
        String namespace = r.get("namespace").textValue();
        String action = r.get("action").textValue();
        LOG.info("Relaying operator {} of task '{}' in '{}' for {} (operator {}) to owner {}", action, taskId, namespace,
                r.sender(), r.get("operator").textValue(), route.hubId());
        PeerLink link = links.link(route.hubId(), route.uri(), routes.tlsFor(route), token);
        link.request(request, "operator_relay_result", reply -> taskId.equals(reply.path("task_id").asText())
                        && namespace.equals(reply.path("namespace").asText()) && action.equals(reply.path("action").asText()),
                routes.bound()).whenCompleteAsync((result, failure) -> {
            boolean answered = turn.answer(() -> {
                try {
                    settle(r, route, result, failure, action, taskId);
                } catch (RuntimeException e) { // nothing else would see it: the returned future is dropped
                    internalFault(r, route, e);
                }
            });
            if (!answered) { // the operator was answered at the bound: this verdict reaches nobody
                LOG.info("Owner {} answered operator {} of task '{}' after the bound ({}); the operator was told it "
                        + "timed out", route.hubId(), action, taskId, failure == null
                        ? "applied " + result.path("applied").asBoolean() : "failed: " + failure);
            }
        }, hub.outbox().executor());
    }

    private void settle(Request r, ClaimRoute route, ObjectNode result, Throwable failure, String action, String taskId) {
        if (failure != null) {
            Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                    ? failure.getCause() : failure;
            boolean timeout = cause instanceof TimeoutException;
            String outcome = timeout ? "timeout" : "transport_failure";
            outcomes.increment(route.hubId(), outcome);
            LOG.warn("Relaying operator {} of task '{}' to owner {} failed: {}", action, taskId, route.hubId(),
                    cause.getMessage());
            // a timeout leaves the outcome unknown on the owner: retrying with the same idem_key is safe
            answer(r, route.hubId(), false, false, timeout ? "owner_timeout" : "owner_unreachable", outcome);
            return;
        }
        relay(r, route, result);
    }

    private void relay(Request r, ClaimRoute route, ObjectNode result) {
        JsonNode applied = result.get("applied");
        JsonNode pending = result.get("pending");
        JsonNode owner = result.get("owner_hub_id");
        JsonNode detail = result.get("detail");
        if (applied == null || !applied.isBoolean() || pending != null && !pending.isBoolean()
                || owner == null || !owner.isTextual() || owner.textValue().isBlank()
                || detail == null || !detail.isTextual()) {
            outcomes.increment(route.hubId(), "malformed");
            LOG.warn("Owner {} answered an operator relay of task '{}' with a malformed operator_relay_result",
                    route.hubId(), r.get("task_id").textValue());
            answer(r, route.hubId(), false, false, "owner_answer_malformed", "malformed");
            return;
        }
        boolean waiting = pending != null && pending.booleanValue();
        outcomes.increment(route.hubId(), applied.booleanValue() ? "applied" : waiting ? "pending" : "refused");
        answer(r, owner.textValue(), applied.booleanValue(), waiting, detail.textValue(), null);
    }

    /** The requester's {@code operator_relay_result}; {@code forwardError} names a failure to reach a verdict. */
    private void answer(Request r, String ownerHubId, boolean applied, boolean pending, String detail,
                        String forwardError) {
        ObjectNode f = PeerVerdictFrames.relayResult(hub.frames(), r, ownerHubId, applied, pending, detail,
                hub.clock().nowSeconds());
        if (forwardError != null) {
            f.put("forward_error", forwardError);
        }
        hub.outbox().sendInOrder(r.session(), hub.frames().write(f));
        journal(r, ownerHubId, applied, pending, detail, forwardError);
    }

    /** The outbound {@code operator_relay} audit record ({@code direction: "out"}); the owner journals its own. */
    private void journal(Request r, String ownerHubId, boolean applied, boolean pending, String detail,
                         String forwardError) {
        ObjectNode p = AuditJournal.payload();
        p.put("direction", "out");
        p.put("action", r.get("action").textValue());
        p.put("namespace", r.get("namespace").textValue());
        p.put("task_id", r.get("task_id").textValue().strip());
        p.put("operator", r.get("operator").textValue().strip());
        p.put("requester", r.sender());
        p.put("owner_hub_id", ownerHubId);
        JsonNode reason = r.get("reason");
        p.put("reason", reason != null && reason.isTextual() ? reason.textValue().strip() : "");
        p.put("break_glass", r.get("break_glass") != null && r.get("break_glass").asBoolean(false));
        p.put("applied", applied);
        p.put("pending", pending);
        p.put("detail", detail);
        if (forwardError != null) {
            p.put("forward_error", forwardError);
        }
        audit.record("operator_relay", p).whenComplete((committed, failure) -> {
            if (failure != null || !Boolean.TRUE.equals(committed)) {
                auditFailures.incrementAndGet();
                LOG.warn("The outbound operator_relay audit of task '{}' was not journaled: {}",
                        r.get("task_id").textValue(), failure != null ? failure.toString() : "refused by the writer");
            }
        });
    }

    /** The Prometheus samples of forwarded relays. */
    public void appendMetrics(StringBuilder out) {
        outcomes.appendTo(out);
        if (!routes.routes().isEmpty() || source.reloads()) {
            dev.synapsehub.net.protocol.PrometheusText.counter(out, "synapse_operator_relay_audit_failures_total",
                    "Outbound operator relay audit records the writer did not journal.", auditFailures.get());
        }
    }

    /** Forwarded relays to {@code owner} with {@code outcome} (tests). */
    public long outcomes(String owner, String outcome) {
        return outcomes.get(owner, outcome);
    }

}
