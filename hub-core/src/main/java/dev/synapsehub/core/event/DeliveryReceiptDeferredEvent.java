package dev.synapsehub.core.event;

import java.util.List;

/**
 * A recipient acknowledged a pending directed chat: the sender gets {@code delivered: true,
 * deferred: true}. Apply settles the pending receipt.
 *
 * @param recipients the acking logical identity
 */
public record DeliveryReceiptDeferredEvent(double ts, String sender, String target, long messageId, long messageSeq, List<String> recipients,
        String ackedBy, String clientMsgId) implements CoordinationEvent {
    public DeliveryReceiptDeferredEvent {
        recipients = List.copyOf(recipients);
    }

    @Override
    public String kind() {
        return "delivery_receipt_deferred";
    }

    @Override
    public Durability durability() {
        return Durability.FULL;
    }
}
