package dev.synapsehub.core.messaging;

/**
 * What the hub stamps on a chat (INV-CK-1): its message id, its own clock, and the cleaned
 * advisory client members.
 *
 * @param clientTimestamp the kept advisory client time, or null
 * @param clientMsgId the kept retry identity, or null
 */
public record ChatStamp(long msgId, double hubTimestamp, Double clientTimestamp, String clientMsgId) {
}
