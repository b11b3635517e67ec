package dev.synapsehub.core.event;


/** A directed chat asked for a delivery receipt; committed with the chat. Bookkeeping only. */
public record DeliveryReceiptRequestedEvent(double ts, String sender, String target, long messageId, long messageSeq, String clientMsgId) implements CoordinationEvent {
    @Override
    public String kind() {
        return "delivery_receipt_requested";
    }

    @Override
    public Durability durability() {
        return Durability.FULL;
    }
}
