package dev.synapsehub.core.event;

import dev.synapsehub.core.messaging.ReceiptVerdict;

/**
 * The immediate verdict of a receipt-requested directed chat; a negative one becomes a pending
 * deferred receipt on apply (bounded; replay rule §12.5.8).
 */
public record DeliveryReceiptImmediateEvent(double ts, String sender, String target, long messageId, long messageSeq, ReceiptVerdict verdict,
        String clientMsgId) implements CoordinationEvent {
    @Override
    public String kind() {
        return "delivery_receipt_immediate";
    }

    @Override
    public Durability durability() {
        return Durability.FULL;
    }
}
