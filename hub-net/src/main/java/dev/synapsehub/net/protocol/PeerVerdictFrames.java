package dev.synapsehub.net.protocol;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.net.wire.HubFrames;

/**
 * Renders the private verdicts a hub answers hub-to-hub requests with: {@code operator_relay_result}
 * (contract A5.1) and {@code multihub_claim_result} (§11.3). Every hub, federation route and mesh
 * gate that answers one builds it here, so their members and order cannot drift apart.
 */
public final class PeerVerdictFrames {
    /** The fixed payload of every {@code operator_relay_result}. */
    public static final String RELAY_RESULT_PAYLOAD = "Operator relay result";

    private PeerVerdictFrames() {
    }

    /**
     * {@code operator_relay_result} to the requester of {@code r}: applied, then action, namespace and
     * task_id as sent, the owner that decided, detail and pending, in the reference's order.
     */
    public static ObjectNode relayResult(HubFrames frames, Request r, String ownerHubId, boolean applied,
                                         boolean pending, String detail, double ts) {
        ObjectNode f = frames.envelope(r.sender(), "operator_relay_result", RELAY_RESULT_PAYLOAD, ts);
        f.put("applied", applied);
        f.set("action", r.get("action"));
        f.set("namespace", r.get("namespace"));
        f.set("task_id", r.get("task_id"));
        f.put("owner_hub_id", ownerHubId);
        f.put("detail", detail);
        f.put("pending", pending);
        return f;
    }

    /**
     * {@code multihub_claim_result} to {@code target}: the detail doubles as payload; {@code grant} is
     * the granted claim's members, or {@code null} (written as JSON null) when none was granted.
     */
    public static ObjectNode claimResult(HubFrames frames, String target, boolean granted, String taskId,
                                         String namespace, String ownerHubId, String detail, ObjectNode grant,
                                         double ts) {
        ObjectNode f = frames.envelope(target, "multihub_claim_result", detail, ts);
        f.put("granted", granted);
        f.put("task_id", taskId);
        f.put("namespace", namespace);
        f.put("owner_hub_id", ownerHubId);
        f.put("detail", detail);
        if (grant == null) {
            f.putNull("grant");
        } else {
            f.set("grant", grant);
        }
        return f;
    }
}
