package dev.synapsehub.federation.route;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.Outcome;
import dev.synapsehub.core.command.OperatorReleaseCommand;
import dev.synapsehub.core.reply.Reply;
import dev.synapsehub.federation.trust.PeerDecision;
import dev.synapsehub.federation.trust.ServingTrust;
import dev.synapsehub.net.protocol.HubContext;
import dev.synapsehub.net.protocol.Request;
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
 * Then the task is force-released by the writer with an {@code operator_relay} audit record in
 * the same commit, and a {@code release_granted} carrying only {@code task_id} is broadcast
 * before the requester gets {@code operator_relay_result}.
 */
public final class RelayServer {
    private static final Logger LOG = LoggerFactory.getLogger(RelayServer.class);
    private static final ObjectMapper MAPPER = new ObjectMapper(com.fasterxml.jackson.core.JsonFactory.builder()
            .enable(com.fasterxml.jackson.core.json.JsonWriteFeature.ESCAPE_NON_ASCII).build());

    private final HubContext hub;
    private final ServingTrust trust;
    private final OwnershipResolver resolver;
    private final boolean requireReason;
    private final AtomicLong refused = new AtomicLong();
    private final AtomicLong applied = new AtomicLong();

    public RelayServer(HubContext hub, ServingTrust trust, OwnershipResolver resolver, boolean requireReason) {
        this.hub = hub;
        this.trust = trust;
        this.resolver = resolver;
        this.requireReason = requireReason;
    }

    /** Relays refused at a gate. */
    public long refused() {
        return refused.get();
    }

    /** Relays applied. */
    public long applied() {
        return applied.get();
    }

    /** Answers one request (on the connection's event loop). */
    public void handle(Request r) {
        boolean wellFormed = required(r, "action") && required(r, "namespace") && required(r, "task_id")
                && required(r, "operator") && required(r, "origin_hub_id")
                && optional(r.get("reason"), JsonNode::isTextual) && optional(r.get("break_glass"), JsonNode::isBoolean)
                && optional(r.get("idem_key"), v -> v.isTextual() && !v.textValue().isBlank());
        if (!wellFormed) {
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
        PeerDecision peer = trust.decide(r.sender(), r.session().peerCertificate(), now);
        String refusal = null;
        if (!peer.allowed()) {
            LOG.warn("Refused operator relay from peer '{}': {}", r.sender(), peer.reason());
            refusal = "peer_not_authorised";
        } else if (!"release".equals(action)) {
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
        String operator = r.get("operator").textValue().strip();
        String detail = "released by operator " + operator + (reason.isEmpty() ? "" : ": " + reason);
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
        OperatorReleaseCommand command = new OperatorReleaseCommand(r.sender(), namespace, taskId, auditJson);
        hub.actor().submit(Mutation.of(command)).whenCompleteAsync((outcome, failure) -> {
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
                ObjectNode f = hub.frames().envelope("all", "release_granted", "Task '" + granted.claim().taskId()
                        + "' in '" + namespace + "' was released by operator relay: " + detail, hub.clock().nowSeconds());
                f.put("task_id", granted.claim().taskId());
                hub.outbox().broadcast(hub.frames().write(f), r.session());
                result(r, true, detail);
            } else {
                refused.incrementAndGet();
                result(r, false, ((Reply.Denied) decided.reply()).message());
            }
        }, hub.outbox().executor());
    }

    private void result(Request r, boolean done, String detail) {
        ObjectNode f = hub.frames().envelope(r.sender(), "operator_relay_result", "Operator relay result",
                hub.clock().nowSeconds());
        f.put("applied", done);
        f.set("action", r.get("action"));
        f.set("namespace", r.get("namespace"));
        f.set("task_id", r.get("task_id"));
        f.put("owner_hub_id", hub.frames().hubId());
        f.put("detail", detail);
        f.put("pending", false); // no two-person approval here: a relay is applied or refused at once
        hub.outbox().sendInOrder(r.session(), hub.frames().write(f));
    }

    private static boolean required(Request r, String field) {
        JsonNode v = r.get(field);
        return v != null && v.isTextual() && !v.textValue().isBlank();
    }

    private static boolean optional(JsonNode v, java.util.function.Predicate<JsonNode> ok) {
        return v == null || v.isNull() || ok.test(v);
    }
}
