package dev.synapsehub.net.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.PythonWhitespace;
import dev.synapsehub.core.command.IdentityPinCommand;
import dev.synapsehub.core.event.IdentityPinReclaimEvent;
import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.core.identity.IdentityPin;
import dev.synapsehub.core.identity.IdentityPinRegistry;
import dev.synapsehub.core.reply.IdentityPinReply;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.net.identity.IdentityPinSettings;
import dev.synapsehub.net.identity.IdentityTrust;
import dev.synapsehub.net.session.Session;
import dev.synapsehub.net.session.SessionRegistry;
import dev.synapsehub.net.wire.HubFrames;

import java.util.List;
import java.util.Optional;
import java.util.function.BooleanSupplier;

/**
 * The operator verb {@code identity_pin_reclaim} (wire contract A2.6): the checks in the
 * contract's order, each refusal a private {@code identity_pin_reclaim_result} whose payload is
 * the first failing check. On success the writer journals the approval, the pin's removal and
 * the application in one batch; then a live holder's socket is closed 4017, every socket gets
 * the {@code system} notice, and the operator gets the result naming the applied record. The
 * name's ownership lease ends with the pin (check 12 and break-glass treat the lease as the
 * reclaimed identity's), so the next valid proof can bind the name and pin it.
 */
final class IdentityPinReclaimVerb {
    /** The verb. */
    static final String TYPE = "identity_pin_reclaim";
    /** Close code and reason for a reclaimed holder's socket (A2.6, decision A10.4). */
    static final int RECLAIMED_CODE = 4017;
    /**
     * A mesh node's refusal where checks 11 and 12 cannot be judged cluster-wide (ours: the
     * contract knows no mesh); it ends as check 11 does, with the recovery that works.
     */
    static final String OTHER_NODES = "the pinned identity may be online or leased on another mesh node; use explicit "
            + "break-glass recovery to evict it";

    private final VerbSupport support;
    private final CoordinationActor actor;
    private final SessionRegistry registry;
    private final Outbox outbox;
    private final HubFrames frames;
    private final IdentityPinSettings pins;
    private final double leaseOfflineTtlSeconds;
    private final LivenessSettings liveness;
    private final boolean journaled;
    private final BooleanSupplier presenceIsNodeLocal;

    /**
     * The reclaim verb under the hub's pin settings and lease TTL; {@code journaled} when the hub
     * can journal the mandatory audit event, and {@code presenceIsNodeLocal} true on a mesh node,
     * which sees only its own connections (asked per request: extensions bind after the pipeline).
     */
    IdentityPinReclaimVerb(VerbSupport support, CoordinationActor actor, SessionRegistry registry, Outbox outbox,
            HubFrames frames, IdentityPinSettings pins, double leaseOfflineTtlSeconds, LivenessSettings liveness,
            boolean journaled,
            BooleanSupplier presenceIsNodeLocal) {
        this.support = support;
        this.actor = actor;
        this.registry = registry;
        this.outbox = outbox;
        this.frames = frames;
        this.pins = pins;
        this.leaseOfflineTtlSeconds = leaseOfflineTtlSeconds;
        this.liveness = liveness;
        this.journaled = journaled;
        this.presenceIsNodeLocal = presenceIsNodeLocal;
    }

    void handle(Request r) {
        double now = support.now();
        String pinName = text(r.get("pin_name"));
        String keyId = text(r.get("expected_key_id"));
        String reason = text(r.get("reason"));
        JsonNode glass = r.get("break_glass");
        boolean breakGlass = glass != null && glass.isBoolean() && glass.booleanValue(); // only literal true
        boolean online = !pinName.isEmpty() && registry.isOnline(pinName);
        boolean leaseLive = !pinName.isEmpty() && registry.leaseLive(pinName, now);
        // a mesh node sees only its own connections: it cannot prove the holder offline, unleased
        // or quiet on the others, so it fails closed and only break-glass reclaims there
        boolean nodeLocal = presenceIsNodeLocal.getAsBoolean();
        boolean stale = online && !nodeLocal && staleOwner(pinName, now);
        Optional<IdentityPin> target = actor.committedPin(pinName);
        IdentityTrust trust = pins.trust();
        String boundKeyId = trust == null ? null : trust.keyOf(r.sender()).map(IdentityTrust.TrustedKey::keyId)
                .orElse(null);
        String refusal;
        if (pinName.isEmpty()) {
            refusal = "pin name is required";
        } else if (keyId.isEmpty()) {
            refusal = "expected key id is required";
        } else if (reason.isEmpty()) {
            refusal = "a non-empty operator reason is required";
        } else if (reason.codePointCount(0, reason.length()) > 500) {
            refusal = "operator reason exceeds 500 characters";
        } else if (pinName.equals(r.sender())) {
            refusal = "an operator cannot reclaim the identity used by its own live connection";
        } else if (!pins.acl().allows(r.sender(), pinName)) {
            refusal = "no identity-pin-reclaim ACL grant authorises this operator and target";
        } else if (boundKeyId == null && actor.committedPin(r.sender()).isEmpty()) {
            refusal = IdentityPinRegistry.NOT_BOUND; // in the bundle posture every name proved its bundle key
        } else if (!journaled) {
            refusal = "the hub has no durable journal for the mandatory reclaim audit event";
        } else if (target.isEmpty()) {
            refusal = IdentityPinRegistry.NO_PIN;
        } else if (!target.get().keyId().equals(keyId)) {
            refusal = IdentityPinRegistry.KEY_MISMATCH;
        } else if (online && !breakGlass && !stale) {
            refusal = "the pinned identity is online; use explicit break-glass recovery to evict it";
        } else if (leaseLive && !breakGlass && !stale) {
            refusal = "the ownership lease is still live; wait for its offline TTL or use break-glass";
        } else if (nodeLocal && !breakGlass) {
            refusal = OTHER_NODES;
        } else {
            refusal = null;
        }
        if (refusal != null) {
            outbox.send(r.session(), result(r, pinName, keyId, breakGlass, false, 0, refusal, now));
            return;
        }
        IdentityPinCommand.Reclaim command = new IdentityPinCommand.Reclaim(r.sender(), pinName, keyId, reason,
                breakGlass, online, leaseLive, stale, boundKeyId);
        support.submit(r, command, false, null, DecisionPublisher.typed(IdentityPinReply.class, (d, p) -> {
            Request req = d.request();
            double at = d.at();
            if (p.outcome() != IdentityPinReply.Outcome.RECLAIMED) {
                outbox.send(req.session(), result(req, pinName, keyId, breakGlass, false, 0, p.message(), at));
                return;
            }
            long auditSeq = evictAndAnnounce(req, p, pinName, breakGlass, d.committed(), at);
            outbox.send(req.session(), result(req, pinName, keyId, breakGlass, true, auditSeq,
                    p.message(), at));
        }, support::refusePrivately));
    }

    /**
     * A reclaim another mesh node took and the leader applied, here: the holder's socket on this
     * node (if any) is closed 4017 and this node's sockets get the {@code system} notice, as
     * the taking node does for its own (that node answers the operator).
     */
    void publishCommitted(CommittedDecision d) {
        if (d.reply() instanceof IdentityPinReply p && p.outcome() == IdentityPinReply.Outcome.RECLAIMED) {
            JsonNode glass = d.request().get("break_glass");
            evictAndAnnounce(d.request(), p, p.pin().name(),
                    glass != null && glass.isBoolean() && glass.booleanValue(), d.committed(), d.at());
        }
    }

    /**
     * Closes the reclaimed name's socket on this hub, ends its ownership lease here, tells every
     * socket; returns the audit seq.
     */
    private long evictAndAnnounce(Request req, IdentityPinReply p, String pinName, boolean breakGlass,
            List<JournaledEvent> committed, double at) {
        long auditSeq = committed.stream()
                .filter(j -> j.event() instanceof IdentityPinReclaimEvent a && a.applied())
                .mapToLong(JournaledEvent::seq).findFirst().orElse(p.auditSeq());
        evict(pinName);
        ObjectNode notice = frames.envelope("all", "system", "Identity pin for '" + pinName
                + "' was reclaimed by operator '" + req.sender() + "'.", at);
        notice.put("event_kind", TYPE);
        notice.put("operator", req.sender());
        notice.put("pin_name", pinName);
        notice.put("previous_key_id", p.pin().keyId());
        notice.put("break_glass", breakGlass);
        notice.put("audit_seq", auditSeq);
        outbox.broadcast(notice);
        return auditSeq;
    }

    /**
     * Closes the reclaimed name's socket on this hub (4017, once) and ends its ownership lease
     * here: for the node that took the reclaim, and on every other mesh node as it applies the
     * reclaim, announced there or not.
     */
    void evict(String pinName) {
        Session holder = registry.session(pinName);
        if (holder != null && !holder.closing()) {
            outbox.close(holder, null, RECLAIMED_CODE, "identity pin reclaimed");
        }
        // the lease was the reclaimed identity's: left in place, it would refuse (4016) the next
        // valid proof that A2.6 says may pin the name, until its offline TTL ran out
        registry.revokeLease(pinName);
    }

    /**
     * The A2.6 waiver of checks 11 and 12: an online holder that has not reacted for
     * {@code --lease-offline-ttl} past its reaction window ({@code --recipient-liveness-window}) and
     * has no live waiter ({@code -rx} / {@code -pane-rx} seen within {@code --waiter-liveness-window}).
     * A holder with no recorded reaction is never waived.
     */
    private boolean staleOwner(String name, double now) {
        Double last = registry.lastReactionIfBound(name); // one entry: no copy of every online name's
        return last != null && now - last > liveness.recipientWindow() + leaseOfflineTtlSeconds
                && !LiveWaiters.has(name, now, liveness.waiterWindow(), registry::lastSeenIfBound);
    }

    private ObjectNode result(Request r, String pinName, String keyId, boolean breakGlass, boolean applied,
            long auditSeq, String payload, double at) {
        ObjectNode f = frames.envelope(r.sender(), "identity_pin_reclaim_result", payload, at);
        f.put("pin_name", pinName);
        f.put("expected_key_id", keyId);
        f.put("applied", applied);
        f.put("break_glass", breakGlass);
        if (applied) {
            f.put("audit_seq", auditSeq);
        } else {
            f.putNull("audit_seq");
        }
        return f;
    }

    private static String text(JsonNode v) {
        return v != null && v.isTextual() ? PythonWhitespace.strip(v.textValue()) : ""; // Python str.strip (A2.6)
    }
}
