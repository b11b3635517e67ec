package dev.synapsehub.core.messaging;

import dev.synapsehub.core.undo.UndoLog;

import java.util.ArrayList;
import java.util.List;

/**
 * The receipt notification outbox (contract §8.5): every deferred or expired receipt is owed to
 * its sender from the moment it is decided until the edge reports it written to a socket bound
 * to that name. Bounded: beyond the capacity the oldest owed receipt is dropped (the sender
 * dedupes on {@code receipt_notification_id}, so losing a very old one only loses a notice).
 */
final class ReceiptOutbox {
    private final StampedLru<String, OwedReceipt> owed;

    ReceiptOutbox(int capacity, UndoLog undo) {
        this.owed = new StampedLru<>(capacity, undo);
    }

    void owe(OwedReceipt receipt) {
        owed.put(receipt.notificationId(), receipt);
    }

    /** Settles {@code id} if it is owed to {@code sender}; true when it was. */
    boolean settle(String sender, String id) {
        OwedReceipt r = owed.get(id);
        if (r == null || !r.sender().equals(sender)) {
            return false;
        }
        owed.remove(id);
        return true;
    }

    boolean owes(String sender, String id) {
        OwedReceipt r = owed.get(id);
        return r != null && r.sender().equals(sender);
    }

    /** Everything owed, oldest first. */
    List<OwedReceipt> all() {
        return new ArrayList<>(owed.view().values());
    }

    int size() {
        return owed.size();
    }
}
