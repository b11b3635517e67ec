package dev.synapsehub.core.reply;

import dev.synapsehub.core.event.DeliveryReceiptDeferredEvent;

/**
 * The outcome of an {@code ack} or a mailbox cursor: no frame to the acker.
 *
 * @param watermark the identity's watermark after the command
 * @param advanced whether the command moved the watermark
 * @param deferredReceipt a deferred receipt to send to its original sender (named), or null
 */
public record MailboxReply(String identity, long watermark, boolean advanced,
        DeliveryReceiptDeferredEvent deferredReceipt) implements Reply {
}
