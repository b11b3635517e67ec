package dev.synapsehub.core.event;

import java.util.List;

/**
 * Owed receipts were written to their sender's socket and leave the notification outbox
 * (contract §8.5). A hub-specific kind ({@code delivery_receipt_outbox_delivered}); reference
 * logs lack it, and replay without it only re-sends receipts the sender dedupes.
 */
public record ReceiptsDeliveredEvent(double ts, String sender, List<String> notificationIds)
        implements CoordinationEvent {
    public ReceiptsDeliveredEvent {
        notificationIds = List.copyOf(notificationIds);
    }

    @Override
    public String kind() {
        return "delivery_receipt_outbox_delivered";
    }

    @Override
    public Durability durability() {
        return Durability.NORMAL; // lost in a crash, a receipt is sent once more with its id
    }
}
