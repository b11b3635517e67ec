package dev.synapsehub.federation.route;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.actor.Idempotency;
import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.Outcome;
import dev.synapsehub.core.command.OperatorReleaseCommand;
import dev.synapsehub.core.reply.Reply;
import dev.synapsehub.federation.trust.PeerDecision;
import dev.synapsehub.federation.trust.ServingTrust;
import dev.synapsehub.net.extension.HubServices;
import dev.synapsehub.net.protocol.PeerVerdictFrames;
import dev.synapsehub.net.protocol.Request;
import dev.synapsehub.net.wire.CanonicalJson;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The owning side of an operator relay (contract A5.1): {@code operator_relay_request} from a
 * peer hub, validated, then its gates in the contract's order, the first failure answering
 * {@code applied: false} with its {@code detail}: the peer is authorised by the serving policy
 * with its live client certificate ({@code peer_not_authorised}, the reason logged), the action
 * is registered (only {@code release}: {@code unknown_action}), a reason is present when
 * {@code --require-relay-reason} ({@code reason_required}), the peer's grant covers the namespace
 * ({@code scope_not_granted}) and the namespace resolves local here ({@code namespace_not_owned}).
 * With {@code --require-two-person-relay} the first authorised peer's request is only recorded
 * ({@code pending: true}, in memory, listed in {@code state_snapshot.pending_relay_approvals});
 * a distinct peer asking the same releases it.
 * Then the task is force-released by the writer with an {@code operator_relay} audit record in
 * the same commit, and a {@code release_granted} carrying only {@code task_id} is broadcast
 * before the requester gets {@code operator_relay_result}.
 *
 * <p>On a mesh node ({@link #replicated}) the release is a write the leader decides, whichever
 * node took the request: a keyed one's first answer is rendered on the leader from the request
 * ({@link #storedResponse}) and replayed to a retry through any node; the two-person approvals
 * are decided by the writer too and held in the replicated state
 * ({@link dev.synapsehub.core.state.RelayApprovals}), so an approval taken by one node counts
 * when the second arrives at another; and each other node broadcasts the committed release to
 * its own connections ({@link #publishCommitted}).
 */
public final class RelayServer {
    private static final Logger LOG = LoggerFactory.getLogger(RelayServer.class);
    private static final ObjectMapper MAPPER = new ObjectMapper(com.fasterxml.jackson.core.JsonFactory.builder()
            .enable(com.fasterxml.jackson.core.json.JsonWriteFeature.ESCAPE_NON_ASCII).build());

    private final HubServices hub;
    private final ServingTrust trust;
    private final OwnershipResolver resolver;
    private final boolean requireReason;
    private final boolean twoPerson;
    /** True on a mesh node: approvals are decided by the writer and replicated, not held here. */
    private final boolean replicatedApprovals;
    /** Relays awaiting a second operator at most; the oldest is forgotten beyond. */
    static final int MAX_PENDING = 4096;
    /** Relays awaiting a second operator, oldest first; keyed by action, namespace and task. */
    private final java.util.LinkedHashMap<java.util.List<String>, String> pending = new java.util.LinkedHashMap<>();
    private final AtomicLong refused = new AtomicLong();
    private final AtomicLong applied = new AtomicLong();
    /** Relays answered {@code pending: true} (a first approval recorded, or the same principal again). */
    private final AtomicLong awaitingSecond = new AtomicLong();

    public RelayServer(HubServices hub, ServingTrust trust, OwnershipResolver resolver,
                       dev.synapsehub.federation.FederationSettings.RelayPolicy policy) {
        this(hub, trust, resolver, policy, false);
    }

    private RelayServer(HubServices hub, ServingTrust trust, OwnershipResolver resolver,
                        dev.synapsehub.federation.FederationSettings.RelayPolicy policy, boolean replicatedApprovals) {
        this.replicatedApprovals = replicatedApprovals;
        this.hub = hub;
        this.trust = trust;
        this.resolver = resolver;
        this.requireReason = policy.requireReason();
        this.twoPerson = policy.twoPerson();
    }

    /** The owning side on a mesh node: two-person approvals decided by the writer and replicated. */
    public static RelayServer replicated(HubServices hub, ServingTrust trust, OwnershipResolver resolver,
                                         dev.synapsehub.federation.FederationSettings.RelayPolicy policy) {
        return new RelayServer(hub, trust, resolver, policy, true);
    }

    /**
     * Writes the relays awaiting a second operator as {@code {action, namespace, task_id,
     * requester}}, oldest first ({@code state_snapshot.pending_relay_approvals}).
     */
    public void writePending(com.fasterxml.jackson.databind.node.ArrayNode out) {
        if (replicatedApprovals) { // the writer's committed approvals, the same on every node
            hub.actor().pendingRelayApprovals().forEach(p -> out.addObject().put("action", p.action())
                    .put("namespace", p.namespace()).put("task_id", p.taskId()).put("requester", p.requester()));
            return;
        }
        synchronized (pending) {
            pending.forEach((key, requester) -> out.addObject().put("action", key.get(0)).put("namespace", key.get(1))
                    .put("task_id", key.get(2)).put("requester", requester));
        }
    }

    /**
     * Two-person relay: the first authorised principal (the peer hub, verified by its certificate)
     * is recorded; the same one again is told so; a distinct one releases. Returns the refusal
     * detail with {@code pending: true}, or null to apply now.
     */
    private String secondOperator(String action, String namespace, String taskId, String principal) {
        if (!twoPerson) {
            return null;
        }
        java.util.List<String> key = java.util.List.of(action, namespace, taskId);
        synchronized (pending) {
            String first = pending.get(key);
            if (first == null) {
                if (pending.size() >= MAX_PENDING) {
                    java.util.List<String> oldest = pending.keySet().iterator().next();
                    pending.remove(oldest);
                    LOG.warn("{} operator relays await a second operator; the oldest ({}) is forgotten", MAX_PENDING,
                            oldest);
                }
                pending.put(key, principal);
                return "recorded; awaiting approval by a second operator";
            }
            if (first.equals(principal)) {
                return "already recorded by this verified principal; awaiting a distinct principal";
            }
            pending.remove(key);
            return null;
        }
    }

    /** Relays refused at a gate. */
    public long refused() {
        return refused.get();
    }

    /** Relays applied. */
    public long applied() {
        return applied.get();
    }

    /** Relays answered pending (awaiting a second operator). */
    public long pendingAnswers() {
        return awaitingSecond.get();
    }

    /**
     * {@code synapse_operator_relays_served_total{outcome}}: the relays this hub (on a mesh: this
     * node, where the request arrived) answered as the owning side, applied, pending or refused.
     * Keyed retries answered from the ledger are not counted again.
     */
    public void appendMetrics(StringBuilder out) {
        String name = "synapse_operator_relays_served_total";
        String help = "Operator relays answered as the owning side, by outcome (on a mesh: by the node they arrived at).";
        dev.synapsehub.net.protocol.PrometheusText.sample(out, name, help, "counter", "{outcome=\"applied\"}",
                applied.get());
        dev.synapsehub.net.protocol.PrometheusText.sample(out, name, help, "counter", "{outcome=\"pending\"}",
                awaitingSecond.get());
        dev.synapsehub.net.protocol.PrometheusText.sample(out, name, help, "counter", "{outcome=\"refused\"}",
                refused.get());
    }

    /** True when {@code r} has the members and types of contract A5.1 (else: {@code Malformed operator relay request}). */
    static boolean wellFormed(Request r) {
        return required(r, "action") && required(r, "namespace") && required(r, "task_id")
                && required(r, "operator") && required(r, "origin_hub_id")
                && optional(r.get("reason"), JsonNode::isTextual) && optional(r.get("break_glass"), JsonNode::isBoolean)
                && optional(r.get("idem_key"), v -> v.isTextual() && !v.textValue().isBlank());
    }

    /** Answers one request (on the connection's event loop). */
    public void handle(Request r) {
        if (!wellFormed(r)) {
            hub.outbox().sendInOrder(r.session(), hub.frames().write(
                    hub.frames().error(r.sender(), "Malformed operator relay request", hub.clock().nowSeconds())));
            return;
        }
        String action = r.get("action").textValue();
        String namespace = r.get("namespace").textValue();
        String taskId = r.get("task_id").textValue();
        JsonNode reasonNode = r.get("reason");
        String reason = reasonNode != null && reasonNode.isTextual() ? reasonNode.textValue().strip() : "";
        double now = hub.clock().nowSeconds();
        PeerDecision peer = trust.decide(r.sender(), r.session().peerCertificateChain(), now);
        if (!peer.allowed()) {
            LOG.warn("Refused operator relay from peer '{}': {}", r.sender(), peer.reason());
            refused.incrementAndGet();
            result(r, false, "peer_not_authorised");
            return;
        }
        JsonNode idemNode = r.get("idem_key");
        // keyed by the verified peer: another principal's retry is a new request (catalog INV-CR-1 #33)
        String ledgerKey = idemNode == null || idemNode.isNull() ? null
                : Idempotency.key(r.sender(), r.type(), idemNode.textValue());
        // a keyed retry of an authorised peer gets its first answer before any gate of the present moment
        // (action, reason, grant, ownership, partition: INV-CR-1), as ClaimServer answers a forwarded claim;
        // a new request meets the gates in contract A5.1's order
        java.util.Optional<Outcome> prior = ledgerKey == null ? java.util.Optional.empty()
                : hub.actor().priorAnswer(ledgerKey, digest(r));
        if (prior.isPresent()) {
            answer(r, namespace, taskId, r.get("operator").textValue().strip(), detail(r), prior.get(), null);
            return;
        }
        String refusal = null;
        if (!"release".equals(action)) {
            refusal = "unknown_action";
        } else if (requireReason && reason.isEmpty()) {
            refusal = "reason_required";
        } else if (!peer.grant().namespace().equals(namespace)) {
            refusal = "scope_not_granted";
        } else if (resolver.resolve(namespace + "/operator-relay", now).ownership() != Ownership.LOCAL) {
            refusal = "namespace_not_owned";
        }
        if (refusal != null) {
            refused.incrementAndGet();
            result(r, false, refusal);
            return;
        }
        // a keyed retry of a relay applied since the ledger was read above replays its answer; it never opens a
        // second quorum
        // on a mesh the writer counts the operators (the approvals are replicated state)
        String awaiting = replicatedApprovals || (ledgerKey != null && hub.actor().remembers(ledgerKey)) ? null
                : secondOperator(action, namespace, taskId.strip(), r.sender());
        if (awaiting != null) {
            awaitingSecond.incrementAndGet();
            result(r, false, awaiting, true);
            return;
        }
        String operator = r.get("operator").textValue().strip();
        String detail = detail(r);
        ObjectNode audit = MAPPER.createObjectNode();
        audit.put("action", action).put("namespace", namespace).put("task_id", taskId.strip())
                .put("operator", operator).put("origin_hub_id", r.get("origin_hub_id").textValue())
                .put("peer", r.sender()).put("reason", reason)
                .put("break_glass", r.get("break_glass") != null && r.get("break_glass").asBoolean(false))
                .put("applied", true);
        String auditJson;
        try {
            auditJson = MAPPER.writeValueAsString(audit); // compact and ASCII-escaped, as audit records are stored
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
        OperatorReleaseCommand command = new OperatorReleaseCommand(r.sender(), namespace, taskId, auditJson,
                replicatedApprovals && twoPerson ? r.sender() : null);
        Idempotency idem = ledgerKey == null ? null : new Idempotency(ledgerKey, digest(r),
                (reply, at) -> hub.frames().write(resultFrame(r, true, detail, false, at)));
        // on a mesh the request rides along: the leader renders a follower's keyed answer from it
        // (storedResponse), and the other nodes publish the committed release with it (publishCommitted)
        dev.synapsehub.net.protocol.RequestContext context = replicatedApprovals
                ? new dev.synapsehub.net.protocol.RequestContext(r.type(), r.sender(), r.target(), r.frame()) : null;
        hub.outbox().answeredWhen(r.session(), hub.actor().submit(new Mutation(command, idem, context))
                .whenCompleteAsync((outcome, failure) -> answer(r, namespace, taskId, operator, detail, outcome, failure),
                        hub.outbox().executor()));
    }

    /**
     * Answers the peer once the writer decided its relay (on the outbox thread). Every path
     * answers: a callback that threw would leave the peer waiting and the fault unseen.
     */
    void answer(Request r, String namespace, String taskId, String operator, String detail, Outcome outcome,
                Throwable failure) {
        if (failure == null && outcome instanceof Outcome.Replayed replayed) {
            LOG.info("Operator relay from peer '{}' for task '{}' is a keyed retry; its first answer is replayed",
                    r.sender(), taskId);
            hub.outbox().sendInOrder(r.session(), replayed.response());
            return;
        }
        if (failure == null && outcome instanceof Outcome.IdempotencyConflict) {
            refused.incrementAndGet();
            LOG.warn("Operator relay from peer '{}' for task '{}' reuses an idem_key for a different request",
                    r.sender(), taskId);
            result(r, false, "idempotency_conflict");
            return;
        }
        if (failure != null || !(outcome instanceof Outcome.Decided decided)) {
            String why = failure != null ? "internal_fault"
                    : outcome instanceof Outcome.Refused refusedBy ? refusedBy.reason().name().toLowerCase(
                    java.util.Locale.ROOT) : "not_applied";
            if (failure != null) {
                hub.metrics().faults.incrementAndGet();
                LOG.error("operator relay of task '{}' failed", taskId, failure);
            }
            refused.incrementAndGet();
            result(r, false, why);
        } else if (decided.reply() instanceof Reply.Granted granted) {
            applied.incrementAndGet();
            LOG.info("Operator relay from peer '{}' (operator {}) released task '{}' held by {}", r.sender(),
                    operator, granted.claim().taskId(), granted.claim().owner());
            hub.outbox().broadcast(hub.frames().write(releaseBroadcast(granted, namespace, detail)), r.session());
            if (decided.storedResponse() != null) {
                hub.outbox().sendInOrder(r.session(), decided.storedResponse()); // what a retry will replay
            } else {
                result(r, true, detail);
            }
        } else if (decided.reply() instanceof Reply.Denied denied
                && denied.refusal() == dev.synapsehub.core.reply.Refusal.AWAITING_SECOND_OPERATOR) {
            awaitingSecond.incrementAndGet();
            result(r, false, denied.message(), true); // the writer recorded (or already held) the first approval
        } else if (decided.reply() instanceof Reply.Denied denied) {
            refused.incrementAndGet();
            result(r, false, denied.message());
        } else { // a release is granted or denied: anything else is a fault of this path, answered here
            hub.metrics().faults.incrementAndGet();
            refused.incrementAndGet();
            LOG.error("operator relay of task '{}' from peer '{}' was answered with a {}, neither a grant nor a denial; "
                    + "refused internal_fault", taskId, r.sender(), decided.reply().getClass().getSimpleName());
            result(r, false, "internal_fault");
        }
    }

    /** The {@code release_granted} every connection gets for an applied relay. */
    private ObjectNode releaseBroadcast(Reply.Granted granted, String namespace, String detail) {
        ObjectNode f = hub.frames().envelope("all", "release_granted", "Task '" + granted.claim().taskId()
                + "' in '" + namespace + "' was released by operator relay: " + detail, hub.clock().nowSeconds());
        f.put("task_id", granted.claim().taskId());
        return f;
    }

    /** What an applied relay's answer and broadcast say, from the request alone. */
    private static String detail(Request r) {
        JsonNode reasonNode = r.get("reason");
        String reason = reasonNode != null && reasonNode.isTextual() ? reasonNode.textValue().strip() : "";
        return "released by operator " + r.get("operator").textValue().strip() + (reason.isEmpty() ? "" : ": " + reason);
    }

    /**
     * The first answer of an applied keyed relay, rendered from the request alone: a mesh leader
     * stores it for a follower's request, and every retry through any node replays it.
     */
    public dev.synapsehub.core.actor.ResponseRenderer storedResponse(Request r) {
        return (reply, at) -> hub.frames().write(resultFrame(r, true, detail(r), false, at));
    }

    /**
     * Broadcasts to this node's connections a relay another mesh node took and the leader applied
     * (that node answers its requester): the committed release reaches agents on every node.
     * On the outbox thread.
     */
    public void publishCommitted(Request r, Reply reply) {
        if (reply instanceof Reply.Granted granted && wellFormed(r)) {
            hub.outbox().broadcast(hub.frames().write(releaseBroadcast(granted, r.get("namespace").textValue(),
                    detail(r))), null);
        }
    }

    private void result(Request r, boolean done, String detail) {
        result(r, done, detail, false);
    }

    private void result(Request r, boolean done, String detail, boolean awaitingSecond) {
        hub.outbox().sendInOrder(r.session(), hub.frames().write(resultFrame(r, done, detail, awaitingSecond,
                hub.clock().nowSeconds())));
    }

    private ObjectNode resultFrame(Request r, boolean done, String detail, boolean awaitingSecond, double at) {
        return PeerVerdictFrames.relayResult(hub.frames(), r, hub.frames().hubId(), done, awaitingSecond, detail, at);
    }

    /**
     * The request digest of a keyed relay: SHA-256 over the canonical frame, sender and type
     * normalised, the members that differ between identical retries removed (as for every keyed verb).
     */
    static String digest(Request r) {
        ObjectNode copy = r.frame().deepCopy();
        copy.put("sender", r.sender());
        copy.put("type", r.type());
        copy.remove(java.util.List.of("token", "timestamp", "client_timestamp", "auth", "signature"));
        try {
            byte[] d = java.security.MessageDigest.getInstance("SHA-256").digest(
                    CanonicalJson.write(copy, true).getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            return java.util.HexFormat.of().formatHex(d);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static boolean required(Request r, String field) {
        JsonNode v = r.get(field);
        return v != null && v.isTextual() && !v.textValue().isBlank();
    }

    private static boolean optional(JsonNode v, java.util.function.Predicate<JsonNode> ok) {
        return v == null || v.isNull() || ok.test(v);
    }
}
