package dev.synapsehub.net.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.Clock;
import dev.synapsehub.net.wire.HubFrames;

/**
 * Optional verbs of contract §14 whose feature this hub does not run, answered as the
 * reference answers a hub without that feature (A4, A5.1) instead of "Unknown
 * message type": existing clients read these answers. Nothing is applied, journaled or sent
 * to anyone but the requester.
 */
final class UnavailableFeatureVerbs {
    private final Outbox outbox;
    private final HubFrames frames;
    private final Clock clock;

    UnavailableFeatureVerbs(Outbox outbox, HubFrames frames, Clock clock) {
        this.outbox = outbox;
        this.frames = frames;
        this.clock = clock;
    }

    /** True when {@code r} was answered here. */
    boolean answer(Request r) {
        switch (r.type()) {
            case "federation_offer_request":
                // a hub with --federation-offer answers through its federation extension first
                send(r, frames.error(r.sender(), "No federation offer is configured on this hub.", now()));
                return true;
            case "operator_relay_request":
                operatorRelay(r);
                return true;
            default:
                return false;
        }
    }

    /** A5.1: no relay is authorised here, so a well-formed request answers {@code peer_not_authorised}. */
    private void operatorRelay(Request r) {
        boolean wellFormed = required(r, "action") && required(r, "namespace") && required(r, "task_id")
                && required(r, "operator") && required(r, "origin_hub_id")
                && optional(r.get("reason"), JsonNode::isTextual) && optional(r.get("break_glass"), JsonNode::isBoolean)
                && optional(r.get("idem_key"), v -> v.isTextual() && !v.textValue().isBlank());
        if (!wellFormed) {
            send(r, frames.error(r.sender(), "Malformed operator relay request", now()));
            return;
        }
        send(r, PeerVerdictFrames.relayResult(frames, r, frames.hubId(), false, false, "peer_not_authorised", now()));
    }

    private static boolean required(Request r, String field) {
        JsonNode v = r.get(field);
        return v != null && v.isTextual() && !v.textValue().isBlank();
    }

    private static boolean optional(JsonNode v, java.util.function.Predicate<JsonNode> ok) {
        return v == null || v.isNull() || ok.test(v);
    }

    private void send(Request r, ObjectNode frame) {
        outbox.send(r.session(), frame);
    }

    private double now() {
        return clock.nowSeconds();
    }
}
