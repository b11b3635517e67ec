package dev.synapsehub.federation.serve;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.federation.link.PeerLink;
import dev.synapsehub.federation.follow.AdvisoryFold;
import dev.synapsehub.federation.follow.ObservedClaim;
import dev.synapsehub.federation.follow.PeerView;
import dev.synapsehub.net.extension.HubServices;
import dev.synapsehub.net.protocol.Request;
import dev.synapsehub.net.wire.HubFrames;

import java.util.Comparator;

/**
 * {@code multihub_observed_request} → private {@code multihub_observed}: the advisory view of
 * every watched peer (a query of our own, docs/protocol.md). It shows what peers assert; it
 * grants nothing (INV-MH-2).
 */
public final class ObservedQuery {
    private final HubServices hub;
    private final AdvisoryFold fold;
    private final java.util.function.Function<String, PeerLink> links;

    public ObservedQuery(HubServices hub, AdvisoryFold fold) {
        this(hub, fold, peer -> null);
    }

    /** {@code links} gives the live link to a watched peer (null: none), for its round trip and certificate expiry. */
    public ObservedQuery(HubServices hub, AdvisoryFold fold, java.util.function.Function<String, PeerLink> links) {
        this.hub = hub;
        this.fold = fold;
        this.links = links;
    }

    /** Answers one request; {@code peer} filters, {@code claims: false} leaves the claims out. */
    public void handle(Request r) {
        double now = hub.clock().nowSeconds();
        String only = r.get("peer") != null && r.get("peer").isTextual() ? r.get("peer").textValue() : null;
        boolean withClaims = r.get("claims") == null || !r.get("claims").isBoolean() || r.get("claims").booleanValue();
        ObjectNode f = hub.frames().envelope(r.sender(), "multihub_observed",
                "Advisory view of watched peers (grants nothing)", now);
        f.put("advisory", true);
        ArrayNode peers = f.putArray("peers");
        for (PeerView v : fold.peers()) {
            if (only != null && !only.equals(v.peer())) {
                continue;
            }
            ObjectNode peer = render(v, now, withClaims);
            connection(peer, links.apply(v.peer()));
            peers.add(peer);
        }
        hub.outbox().send(r.session(), f);
    }

    /**
     * Adds what the live link measured: {@code round_trip_seconds} (the last answered request) and
     * {@code certificate_not_after} (the peer's server certificate, epoch seconds), each null when
     * not measured (no link yet, no answer yet, or {@code ws://}).
     */
    public static void connection(ObjectNode peer, PeerLink link) {
        double rtt = link == null ? Double.NaN : link.roundTripSeconds();
        PeerLink.Welcome w = link == null ? null : link.welcome();
        double notAfter = w == null ? Double.NaN : w.certificateNotAfter();
        if (Double.isNaN(rtt)) {
            peer.putNull("round_trip_seconds");
        } else {
            HubFrames.putFloat(peer, "round_trip_seconds", Math.round(rtt * 1e6) / 1e6);
        }
        if (Double.isNaN(notAfter)) {
            peer.putNull("certificate_not_after");
        } else {
            HubFrames.putFloat(peer, "certificate_not_after", notAfter);
        }
    }

    /** One peer's view as a JSON object (also the offline {@code federation observed}). */
    public static ObjectNode render(PeerView v, double now, boolean withClaims) {
        ObjectNode o = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode();
        o.put("peer", v.peer());
        o.put("cursor", v.cursor());
        if (v.logEnd() < 0) {
            o.putNull("log_end_seq");
        } else {
            o.put("log_end_seq", v.logEnd());
        }
        o.put("lag", v.lag());
        HubFrames.putFloat(o, "last_success", v.lastSuccess());
        if (v.lastError() == null) {
            o.putNull("last_error");
        } else {
            o.put("last_error", v.lastError());
        }
        if (Double.isNaN(v.clockSkewSeconds())) {
            o.putNull("clock_skew_seconds");
        } else {
            HubFrames.putFloat(o, "clock_skew_seconds", Math.round(v.clockSkewSeconds() * 1000) / 1000.0);
        }
        o.put("quarantined", v.quarantined());
        if (v.quarantined()) {
            o.put("quarantine", v.quarantine());
        }
        o.put("log_generation", v.generation());
        if (withClaims) {
            ArrayNode claims = o.putArray("claims");
            v.claims().values().stream().sorted(Comparator.comparing(ObservedClaim::taskId)).forEach(c -> {
                ObjectNode item = claims.addObject();
                item.put("task_id", c.taskId());
                item.put("owner", c.owner());
                item.put("namespace", c.namespace());
                HubFrames.putFloat(item, "lease_expires_at", c.leaseExpiresAt());
                item.put("live", c.liveAt(now));
                item.put("epoch", c.epoch());
                item.put("status", c.status());
                item.put("seq", c.seq());
                item.put("kind", c.kind());
                item.put("observed_on", c.peer());
            });
        }
        return o;
    }
}
