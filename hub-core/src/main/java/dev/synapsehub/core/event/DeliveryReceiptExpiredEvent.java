package dev.synapsehub.core.event;


/**
 * A pending receipt was evicted from the bounded window: the sender gets {@code delivered: false,
 * expired: true}. Apply drops the pending receipt.
 *
 * @param reason {@code pending_window_evicted}
 */
public record DeliveryReceiptExpiredEvent(double ts, String sender, String target, long messageId, long messageSeq, String reason, String clientMsgId) implements CoordinationEvent {
    @Override
    public String kind() {
        return "delivery_receipt_expired";
    }

    @Override
    public Durability durability() {
        return Durability.FULL;
    }
}
