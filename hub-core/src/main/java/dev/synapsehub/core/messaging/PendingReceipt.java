package dev.synapsehub.core.messaging;

/** A negative directed receipt waiting for an {@code ack} to turn it into a deferred one (§8.4). */
public record PendingReceipt(String sender, String target, long msgId, long msgSeq, String clientMsgId) {
}
