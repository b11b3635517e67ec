package dev.synapsehub.net.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.event.DeliveryReceiptDeferredEvent;
import dev.synapsehub.core.event.DeliveryReceiptExpiredEvent;
import dev.synapsehub.core.messaging.ReceiptVerdict;
import dev.synapsehub.core.reply.ChatReply;
import dev.synapsehub.net.wire.HubFrames;
import dev.synapsehub.net.wire.WireJson;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The {@code delivery_receipt} frames (contract §8.5, A7): immediate, for a channel chat,
 * deferred on an ack and expired on eviction. Members are sorted, as the reference hub emits them.
 */
final class ReceiptFrames {
    private final HubFrames frames;
    private final WireJson json;

    ReceiptFrames(HubFrames frames, WireJson json) {
        this.frames = frames;
        this.json = json;
    }

    /** The receipt a sender gets with its own chat; {@code seq} is 0 on a hub without a journal. */
    ObjectNode immediate(ChatReply c, long seq, double at) {
        ReceiptVerdict v = c.verdict();
        String payload = v.delivered() ? "delivered to " + labelled(v.recipients(), v.wakeCapabilities())
                : "no_online_recipient".equals(v.reason())
                ? "delivery failed: no online recipient matched " + messageTarget(c.target())
                : "delivery failed: " + v.reason().replace('_', ' ') + " for " + messageTarget(c.target());
        ObjectNode f = frames.envelope(c.sender(), "delivery_receipt", payload, at);
        f.put("message_target", messageTarget(c.target()));
        f.put("message_id", c.stamp().msgId());
        if (seq > 0) {
            f.put("message_seq", seq);
        }
        putVerdict(f, c, v.staleRecipients(), v.deadLettered());
        if (seq > 0 && c.directed()) {
            f.put("receipt_notification_id", "delivery-receipt:" + seq + ":"
                    + (v.delivered() ? "immediate_delivered" : "pending"));
        }
        return sorted(f);
    }

    /** The receipt of a member's channel chat (A1.4): never stale recipients, never dead-lettered. */
    ObjectNode channel(ChatReply c, String channel, double at) {
        ReceiptVerdict v = c.verdict();
        String payload = v.delivered() ? "delivered to " + labelled(v.recipients(), v.wakeCapabilities())
                : "delivery failed: no online recipient matched " + channel;
        ObjectNode f = frames.envelope(c.sender(), "delivery_receipt", payload, at);
        f.put("message_target", channel);
        f.put("message_id", c.stamp().msgId());
        putVerdict(f, c, List.of(), false);
        return sorted(f);
    }

    /** The verdict members of an undeferred receipt (member order is fixed by {@link #sorted}). */
    private static void putVerdict(ObjectNode f, ChatReply c, List<String> stale, boolean deadLettered) {
        ReceiptVerdict v = c.verdict();
        f.put("delivered", v.delivered());
        f.put("deferred", false);
        HubFrames.putStrings(f, "recipients", v.recipients());
        HubFrames.putStrings(f, "matched_recipients", v.matchedRecipients());
        HubFrames.putStrings(f, "stale_recipients", stale);
        f.put("reason", v.reason());
        f.put("dead_lettered", deadLettered);
        ObjectNode wake = f.putObject("recipient_wake_capabilities");
        v.wakeCapabilities().forEach(wake::put);
        if (c.stamp().clientMsgId() != null) {
            f.put("client_msg_id", c.stamp().clientMsgId());
        }
    }

    /** The receipt of a chat a recipient acknowledged later (§8.5). */
    ObjectNode deferred(DeliveryReceiptDeferredEvent e, double at) {
        ObjectNode f = frames.envelope(e.sender(), "delivery_receipt",
                "delivered to " + String.join(", ", e.recipients()) + " on reconnect", at);
        f.put("message_target", messageTarget(e.target()));
        f.put("message_id", e.messageId());
        f.put("message_seq", e.messageSeq());
        f.put("delivered", true);
        f.put("deferred", true);
        HubFrames.putStrings(f, "recipients", e.recipients());
        if (e.clientMsgId() != null) {
            f.put("client_msg_id", e.clientMsgId());
        }
        f.put("receipt_notification_id", "delivery-receipt:" + e.messageSeq() + ":deferred");
        return sorted(f);
    }

    /** The receipt of a pending chat the pending-receipt window evicted unacknowledged. */
    ObjectNode expired(DeliveryReceiptExpiredEvent e, double at) {
        ObjectNode f = frames.envelope(e.sender(), "delivery_receipt",
                "no acknowledgement before the pending-receipt window evicted it", at);
        f.put("message_target", messageTarget(e.target()));
        f.put("message_id", e.messageId());
        f.put("message_seq", e.messageSeq());
        f.put("delivered", false);
        f.put("deferred", true);
        f.put("expired", true);
        f.put("reason", e.reason());
        f.putArray("recipients");
        if (e.clientMsgId() != null) {
            f.put("client_msg_id", e.clientMsgId());
        }
        f.put("receipt_notification_id", "delivery-receipt:" + e.messageSeq() + ":expired");
        return sorted(f);
    }

    /** The target a receipt or warning names: {@code all} for a broadcast. */
    static String messageTarget(String target) {
        return target == null || target.isEmpty() ? "all" : target;
    }

    /** Delivery receipt members are emitted in sorted order, as the reference hub does. */
    ObjectNode sorted(ObjectNode f) {
        ObjectNode out = json.object();
        TreeMap<String, JsonNode> members = new TreeMap<>();
        f.fields().forEachRemaining(e -> members.put(e.getKey(), e.getValue()));
        members.forEach(out::set);
        return out;
    }

    /** Recipients with their wake label, as contract A7 writes them ({@code unknown} adds none). */
    static String labelled(List<String> recipients, Map<String, String> wake) {
        List<String> out = new ArrayList<>(recipients.size());
        for (String name : recipients) {
            String label = switch (wake.getOrDefault(name, "unknown")) {
                case "direct" -> " (direct agent)";
                case "passive" -> " (passive receiver)";
                case "pane_bridge" -> " (pane bridge)";
                default -> "";
            };
            out.add(name + label);
        }
        return String.join(", ", out);
    }
}
