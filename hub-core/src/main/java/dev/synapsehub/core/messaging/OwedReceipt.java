package dev.synapsehub.core.messaging;

import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.event.DeliveryReceiptDeferredEvent;
import dev.synapsehub.core.event.DeliveryReceiptExpiredEvent;

import java.util.List;

/**
 * A deferred or expired delivery receipt in the notification outbox (contract §8.5): owed to its
 * sender until a socket bound to that name was sent it. Carries what the frame is built from.
 *
 * @param ts hub time the receipt was decided (the frame's timestamp when re-sent)
 * @param expired true for an expired receipt, false for a deferred (delivered) one
 * @param recipients the acking identity (deferred), empty (expired)
 * @param reason the expiry reason, empty for a deferred receipt
 */
public record OwedReceipt(double ts, String sender, String target, long messageId, long messageSeq, boolean expired,
                          List<String> recipients, String reason, String clientMsgId) {
    public OwedReceipt {
        recipients = List.copyOf(recipients);
        reason = reason == null ? "" : reason;
    }

    /** The owed form of a deferred receipt. */
    public static OwedReceipt of(DeliveryReceiptDeferredEvent e) {
        return new OwedReceipt(e.ts(), e.sender(), e.target(), e.messageId(), e.messageSeq(), false, e.recipients(),
                "", e.clientMsgId());
    }

    /** The owed form of an expired receipt. */
    public static OwedReceipt of(DeliveryReceiptExpiredEvent e) {
        return new OwedReceipt(e.ts(), e.sender(), e.target(), e.messageId(), e.messageSeq(), true, List.of(),
                e.reason(), e.clientMsgId());
    }

    /** The receipt's stable {@code receipt_notification_id} (contract §8.4). */
    public String notificationId() {
        return notificationId(messageSeq, expired);
    }

    /** {@code delivery-receipt:<message_seq>:deferred|expired}. */
    public static String notificationId(long messageSeq, boolean expired) {
        return "delivery-receipt:" + messageSeq + (expired ? ":expired" : ":deferred");
    }

    /** The receipt event this was owed for (what the frame is rendered from). */
    public CoordinationEvent event() {
        if (expired) {
            return new DeliveryReceiptExpiredEvent(ts, sender, target, messageId, messageSeq, reason, clientMsgId);
        }
        return new DeliveryReceiptDeferredEvent(ts, sender, target, messageId, messageSeq, recipients,
                recipients.isEmpty() ? "" : recipients.get(0), clientMsgId);
    }
}
