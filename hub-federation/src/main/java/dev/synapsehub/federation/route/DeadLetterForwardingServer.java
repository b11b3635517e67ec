package dev.synapsehub.federation.route;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.federation.AuditJournal;
import dev.synapsehub.federation.trust.PeerDecision;
import dev.synapsehub.federation.trust.ServingTrust;
import dev.synapsehub.net.extension.HubServices;
import dev.synapsehub.net.protocol.Request;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The owning side of {@code dead_letter_forwarding} (contract §11.5, F5): a peer hub reports
 * directed messages it could not deliver to a recipient in a namespace this hub owns. It is
 * fire-and-forget: nothing is ever sent back. Accepted only from a peer the serving policy
 * authorises with its live client certificate, for a well-formed {@code forwarding} object from
 * that peer itself, whose target's namespace resolves local here; then an audit-only
 * {@code dead_letter_forwarding} record ({@code direction: "in"}) is journaled and, once
 * committed, every socket gets the broadcast {@code dead_letter_forwarding}. Any refusal sends
 * nothing and is logged with its reason.
 *
 * <p>Bounds of ours (the contract sets none): each peer may have {@value #MAX_REPORTS_PER_WINDOW}
 * reports accepted per {@value #WINDOW_SECONDS} s of hub time, since each is journaled at FULL
 * durability and broadcast to every socket; and refusals are logged at most
 * {@value #MAX_LOG_LINES_PER_WINDOW} times per window, the rest counted and summed up in the next
 * line, since anyone who reaches the port can send them.
 */
public final class DeadLetterForwardingServer {
    /** The frame type, and the kind of its audit record. */
    public static final String TYPE = "dead_letter_forwarding";
    /** The longest recipient name a report may carry, in code points (an agent name's bound). */
    static final int MAX_TARGET = 256;
    /** Reports one peer may have accepted within a window. */
    static final int MAX_REPORTS_PER_WINDOW = 60;
    /** The window of both bounds, seconds of hub time. */
    static final double WINDOW_SECONDS = 60.0;
    /** Refusal log lines within a window; further refusals are only counted. */
    static final int MAX_LOG_LINES_PER_WINDOW = 20;
    private static final Logger LOG = LoggerFactory.getLogger(DeadLetterForwardingServer.class);

    private final HubServices hub;
    private final ServingTrust trust;
    private final OwnershipResolver resolver;
    private final AuditJournal audit;
    private final AtomicLong accepted = new AtomicLong();
    private final AtomicLong refused = new AtomicLong();
    /** Per authorised peer (so bounded by the serving policy's grants): {window start, accepted in it}. */
    private final java.util.Map<String, double[]> reportWindows = new java.util.HashMap<>();
    private final LogBudget refusalLog = new LogBudget(LOG, MAX_LOG_LINES_PER_WINDOW, WINDOW_SECONDS,
            "dead-letter forwarding refusals");

    public DeadLetterForwardingServer(HubServices hub, ServingTrust trust, OwnershipResolver resolver,
                                      AuditJournal audit) {
        this.hub = hub;
        this.trust = trust;
        this.resolver = resolver;
        this.audit = audit;
    }

    /** Reports accepted and broadcast. */
    public long accepted() {
        return accepted.get();
    }

    /** Reports refused (unauthorised, malformed, or for a namespace this hub does not own). */
    public long refused() {
        return refused.get();
    }

    /** Handles one report (on the connection's event loop); never answers the sender. */
    public void handle(Request r) {
        double now = hub.clock().nowSeconds();
        PeerDecision peer = trust.decide(r.sender(), r.session().peerCertificateChain(), now);
        if (!peer.allowed()) {
            refuse(now, "Refused dead-letter forwarding from unauthorised peer '{}' ({})", r.sender(), peer.reason());
            return;
        }
        JsonNode forwarding = r.get("forwarding");
        String malformed = malformed(forwarding, r.sender());
        if (malformed != null) {
            refuse(now, "Refused dead-letter forwarding from peer '{}': {}", r.sender(), malformed);
            return;
        }
        String target = forwarding.get("target").textValue().strip();
        long count = forwarding.get("count").longValue();
        Resolution owner = resolver.resolve(target, now);
        if (owner.ownership() != Ownership.LOCAL) {
            refuse(now, "Refused dead-letter forwarding from peer '{}': this hub does not own namespace '{}' ({})",
                    r.sender(), owner.namespace(), owner.ownership());
            return;
        }
        if (!withinPeerLimit(r.sender(), now)) {
            refuse(now, "Refused dead-letter forwarding from peer '{}': more than {} reports in {} s", r.sender(),
                    MAX_REPORTS_PER_WINDOW, (long) WINDOW_SECONDS);
            return;
        }
        ObjectNode record = AuditJournal.payload();
        record.put("target", target).put("count", count).put("origin_hub_id", r.sender())
                .put("owner_hub_id", hub.hubId()).put("direction", "in").put("peer", r.sender());
        // its broadcast reaches the reporting peer too: the connection's later edge answers wait for it
        hub.outbox().answeredWhen(r.session(), audit.record(TYPE, record).whenCompleteAsync((committed, failure) -> {
            if (failure != null || !committed) {
                hub.metrics().faults.incrementAndGet();
                LOG.error("dead-letter forwarding from peer '{}' for '{}' was not journaled; nothing was broadcast",
                        r.sender(), target, failure);
                return;
            }
            accepted.incrementAndGet();
            ObjectNode f = hub.frames().envelope("all", TYPE, "dead-letter forwarding: peer hub '" + r.sender()
                    + "' reports " + count + " directed message" + (count == 1 ? "" : "s") + " to '" + target
                    + "' — nobody received them there; the recipient belongs on this hub", hub.clock().nowSeconds());
            f.put("forwarding_target", target);
            f.put("forwarding_count", count);
            f.put("origin_hub_id", r.sender());
            hub.outbox().broadcast(hub.frames().write(f), r.session());
        }, hub.outbox().executor()));
    }

    /** Why {@code forwarding} is not a report from {@code sender}, or null when it is one. */
    static String malformed(JsonNode forwarding, String sender) {
        if (forwarding == null || !forwarding.isObject()) {
            return "'forwarding' is not an object";
        }
        JsonNode target = forwarding.get("target");
        if (target == null || !target.isTextual() || target.textValue().isBlank()
                || target.textValue().strip().codePointCount(0, target.textValue().strip().length()) > MAX_TARGET) {
            return "'forwarding.target' is not a recipient name";
        }
        JsonNode count = forwarding.get("count");
        if (count == null || !count.isIntegralNumber() || !count.canConvertToLong() || count.longValue() < 1) {
            return "'forwarding.count' is not a positive integer";
        }
        JsonNode origin = forwarding.get("origin_hub_id");
        if (origin == null || !origin.isTextual() || !origin.textValue().equals(sender)) {
            return "'forwarding.origin_hub_id' is not the sending hub";
        }
        JsonNode owner = forwarding.get("owner_hub_id");
        if (owner != null && !owner.isNull() && !owner.isTextual()) {
            return "'forwarding.owner_hub_id' is not a string";
        }
        return null;
    }

    /** Counts one accepted report of {@code peer}; false when its window is full. */
    private synchronized boolean withinPeerLimit(String peer, double now) {
        double[] w = reportWindows.computeIfAbsent(peer, k -> new double[] {now, 0});
        if (now - w[0] >= WINDOW_SECONDS || now < w[0]) {
            w[0] = now;
            w[1] = 0;
        }
        if (w[1] >= MAX_REPORTS_PER_WINDOW) {
            return false;
        }
        w[1]++;
        return true;
    }

    private void refuse(double now, String message, Object... args) {
        refused.incrementAndGet();
        refusalLog.warn(now, message, args);
    }
}
