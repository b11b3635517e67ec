package dev.synapsehub.core.reply;

import dev.synapsehub.core.event.DeadLetterEscalationEvent;
import dev.synapsehub.core.event.DeliveryReceiptExpiredEvent;
import dev.synapsehub.core.messaging.ChatStamp;
import dev.synapsehub.core.messaging.ReceiptVerdict;

import java.util.List;

/**
 * A chat was stamped and recorded. The chat frame is {@code frameJson} plus {@code seq} (from
 * the committed chat event). Follow-ups in order: {@code escalation} broadcast if present;
 * {@code recipient_liveness_warning} when directed with stale or passive matches; the
 * {@code delivery_receipt} from {@code verdict} if {@code receiptRequested}; and one expired
 * receipt per {@code expiredReceipts} to its original sender.
 *
 * @param directed the target is directed (§8.1)
 * @param verdict the immediate delivery verdict (always computed)
 * @param escalation the dead-letter escalation decided with this chat, or null
 * @param expiredReceipts pending receipts this chat's receipt evicted from the bounded window
 * @param channelMembers for a private channel chat, the channel's other members when it was
 *        decided (sorted), bound or not: a mesh node other than the sender's delivers to those
 *        bound to it (its {@code verdict} only knows the sender's node); empty otherwise
 */
public record ChatReply(ChatStamp stamp, String sender, String target, String frameJson, boolean directed,
        boolean receiptRequested, ReceiptVerdict verdict, DeadLetterEscalationEvent escalation,
        List<DeliveryReceiptExpiredEvent> expiredReceipts, List<String> channelMembers) implements Reply {
    public ChatReply {
        expiredReceipts = List.copyOf(expiredReceipts);
        channelMembers = channelMembers == null ? List.of() : List.copyOf(channelMembers); // null: an older node's
    }

    /** A chat that is not in a private channel. */
    public ChatReply(ChatStamp stamp, String sender, String target, String frameJson, boolean directed,
            boolean receiptRequested, ReceiptVerdict verdict, DeadLetterEscalationEvent escalation,
            List<DeliveryReceiptExpiredEvent> expiredReceipts) {
        this(stamp, sender, target, frameJson, directed, receiptRequested, verdict, escalation, expiredReceipts,
                List.of());
    }
}
