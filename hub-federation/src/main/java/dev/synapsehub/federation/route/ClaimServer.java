package dev.synapsehub.federation.route;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.federation.FederationMetrics;
import dev.synapsehub.federation.follow.ObservedClaim;
import dev.synapsehub.federation.trust.PeerDecision;
import dev.synapsehub.federation.trust.ServingTrust;
import dev.synapsehub.net.extension.ClaimService;
import dev.synapsehub.net.extension.HubServices;
import dev.synapsehub.net.protocol.PeerVerdictFrames;
import dev.synapsehub.net.protocol.Request;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The owning side of contract §11.3: decides a {@code multihub_claim_request} only when the peer
 * is authorised by the serving policy with its live client certificate (F5), the request's
 * namespace is the one its grant names, the claimant belongs to that namespace (F9.3), and the
 * namespace resolves {@code local} here (INV-MH-3: deny by default). The claim then goes through
 * the hub's own claim path charged to {@code federation-peer:<hub>}, its {@code idem_key} kept in
 * a ledger scope of that peer, so a retry never grants twice; a retry for a task the claimant
 * already holds gets the existing grant without renewing. Every verdict is a
 * {@code multihub_claim_result}; a malformed request gets an {@code error}.
 */
public final class ClaimServer {
    private static final Logger LOG = LoggerFactory.getLogger(ClaimServer.class);
    /** The quota principal prefix forwarded claims are charged to. */
    public static final String PRINCIPAL_PREFIX = "federation-peer:";

    private final HubServices hub;
    private final ServingTrust trust;
    private final OwnershipResolver resolver;
    private final ClaimService claims;
    private final FederationMetrics metrics;
    /**
     * The last request of each peer hub still being decided. Keyed by the peer's hub id, not its
     * connection: the owner binds a hub id to one connection at a time, and the requests its
     * previous connection left undecided (a link that timed out and reconnected) must be decided
     * before the new connection's, or an unkeyed retry would miss the grant still being made and
     * renew it under another epoch.
     */
    private final Map<String, CompletableFuture<Void>> inOrder = new ConcurrentHashMap<>();
    private final long decisionBoundSeconds;

    public ClaimServer(HubServices hub, ServingTrust trust, OwnershipResolver resolver, ClaimService claims,
                       FederationMetrics metrics) {
        this(hub, trust, resolver, claims, metrics, DECISION_BOUND_SECONDS);
    }

    /** With another bound on one decision (tests). */
    ClaimServer(HubServices hub, ServingTrust trust, OwnershipResolver resolver, ClaimService claims,
                FederationMetrics metrics, long decisionBoundSeconds) {
        this.decisionBoundSeconds = decisionBoundSeconds;
        this.hub = hub;
        this.trust = trust;
        this.resolver = resolver;
        this.claims = claims;
        this.metrics = metrics;
    }

    /** Answers one request (on the connection's event loop). */
    public void handle(Request r) {
        String namespace = text(r.get("namespace"));
        String claimant = text(r.get("claimant"));
        String taskId = text(r.get("task_id"));
        JsonNode claim = r.get("claim");
        boolean malformed = namespace == null || claimant == null || taskId == null || claim == null
                || !claim.isObject() || !wellFormed((ObjectNode) claim);
        // one answer at a time per peer, so the forwarder reads them in request order: an error too, which
        // names no request and would otherwise overtake a verdict still being decided
        CompletableFuture<Void> done = new CompletableFuture<>();
        hub.outbox().answeredWhen(r.session(), done); // the connection's later edge answers wait for the verdict
        String id = r.sender();
        CompletableFuture<Void> before = inOrder.put(id, done);
        done.whenComplete((x, e) -> {
            inOrder.remove(id, done);
            if (e instanceof TimeoutException) {
                metrics.peerClaimsStalled.incrementAndGet();
                LOG.error("forwarded claim '{}' from peer '{}' was not decided within {} s; the peer's later requests"
                        + " go on without it", taskId, id, decisionBoundSeconds);
            }
        });
        Runnable decide = malformed ? () -> {
            hub.outbox().sendInOrder(r.session(), hub.frames().write(hub.frames().error(r.sender(),
                    "Malformed multi-hub claim request", hub.clock().nowSeconds())));
            done.complete(null);
        } : () -> decide(r, namespace, claimant, taskId, (ObjectNode) claim, done);
        Runnable guarded = () -> {
            // a decision that never ends (a fault that answered nothing) must not hold this peer's later requests
            // for good: timed from when it starts (not from arrival, or a queue behind one slow decision would
            // time out one after another), past the bound the next goes on, logged and counted
            done.orTimeout(decisionBoundSeconds, TimeUnit.SECONDS);
            try {
                decide.run();
            } catch (RuntimeException fault) {
                if (malformed) {
                    metrics.peerClaimsStalled.incrementAndGet();
                    LOG.error("fault answering a malformed forwarded claim from peer '{}'", id, fault);
                    done.complete(null);
                } else {
                    faulted(r, taskId, namespace, done, fault);
                }
            }
        };
        if (before == null) {
            guarded.run();
        } else {
            before.whenComplete((x, e) -> guarded.run());
        }
    }

    /** How long a peer's forwarded claim may take to be decided before its later requests go on (3x the peer's bound). */
    static final long DECISION_BOUND_SECONDS = 30;

    private void decide(Request r, String namespace, String claimant, String taskId, ObjectNode claim,
                        CompletableFuture<Void> done) {
        double now = hub.clock().nowSeconds();
        PeerDecision decision = trust.decide(r.sender(), r.session().peerCertificateChain(), now);
        if (!decision.allowed()) {
            metrics.federationDenied.incrementAndGet();
            LOG.warn("Refused forwarded claim '{}' from peer '{}': {}", taskId, r.sender(), decision.reason());
            result(r, false, taskId, namespace, "peer not authorised to forward claims", null, done);
            return;
        }
        String principal = PRINCIPAL_PREFIX + r.sender();
        String scope = "multihub_claim:" + r.sender();
        ObjectNode inner = claim.deepCopy();
        inner.remove("token");
        inner.put("sender", claimant);
        inner.put("type", "claim");
        inner.put("task_id", taskId);
        Request onBehalf = new Request(r.session(), claimant, "claim", "all", inner);
        ClaimService.Answer answer = (granted, grant, message) -> result(r, granted, taskId, namespace, message, grant,
                done);
        // a keyed retry of an authorised peer is answered from the ledger before any check of the present moment
        // (grants, ownership, partition, busy: INV-CR-1); the claim path checks the ledger again when it decides
        if (claims.answerIfKeyed(onBehalf, scope, answer)) {
            return;
        }
        if (!decision.grant().namespace().equals(namespace)) {
            metrics.federationDenied.incrementAndGet();
            LOG.warn("Refused forwarded claim '{}' from peer '{}': namespace '{}' is not its grant's '{}'", taskId,
                    r.sender(), namespace, decision.grant().namespace());
            result(r, false, taskId, namespace, "peer not authorised to forward claims in namespace '" + namespace + "'",
                    null, done);
            return;
        }
        if (!ObservedClaim.namespaceOf(claimant).equals(namespace)) {
            result(r, false, taskId, namespace, "claimant '" + claimant + "' is not in namespace '" + namespace + "'",
                    null, done);
            return;
        }
        Resolution res = resolver.resolve(claimant, now);
        if (res.ownership() != Ownership.LOCAL) {
            result(r, false, taskId, namespace, "this hub does not own namespace '" + namespace + "'"
                    + (res.ownership() == Ownership.PARTITIONED ? " (partitioned)" : ""), null, done);
            return;
        }
        metrics.peerClaimsDecided.incrementAndGet();
        // one writer turn: the ledger decides a keyed claim atomically; an unkeyed one already held by the
        // claimant under this principal is answered with its grant as it stands, never renewed twice
        claims.claimOnBehalf(onBehalf, principal, scope, answer);
    }

    /** A decision that threw: logged, counted, answered refused (unless it answered already), so the peer's next go on. */
    private void faulted(Request r, String taskId, String namespace, CompletableFuture<Void> done, RuntimeException fault) {
        metrics.peerClaimsStalled.incrementAndGet();
        LOG.error("fault deciding forwarded claim '{}' from peer '{}'; answered as refused", taskId, r.sender(), fault);
        if (!done.isDone()) {
            result(r, false, taskId, namespace, "Internal fault while deciding this claim; nothing was applied.", null,
                    done);
        }
    }

    private void result(Request r, boolean granted, String taskId, String namespace, String detail, ObjectNode grant,
                        CompletableFuture<Void> done) {
        ObjectNode f = PeerVerdictFrames.claimResult(hub.frames(), r.sender(), granted, taskId, namespace, hub.hubId(),
                detail, grant, hub.clock().nowSeconds());
        hub.outbox().sendInOrder(r.session(), hub.frames().write(f));
        done.complete(null);
    }

    /**
     * The forwarded claim object has the shapes the claim path accepts (task_id, paths, note,
     * worktree, idem_key), so deciding it always ends in a verdict.
     */
    private static boolean wellFormed(ObjectNode c) {
        for (String field : new String[] {"task_id", "note", "worktree"}) {
            JsonNode v = c.get(field);
            if (v != null && !v.isNull() && !v.isTextual()) {
                return false;
            }
        }
        JsonNode paths = c.get("paths");
        if (paths != null && !paths.isNull()) {
            if (!paths.isArray()) {
                return false;
            }
            for (JsonNode p : paths) {
                if (!p.isTextual()) {
                    return false;
                }
            }
        }
        JsonNode key = c.get("idem_key");
        return key == null || key.isNull() || (key.isTextual() && !key.textValue().isEmpty());
    }

    private static String text(JsonNode n) {
        return n != null && n.isTextual() && !n.textValue().isBlank() ? n.textValue().strip() : null;
    }
}
