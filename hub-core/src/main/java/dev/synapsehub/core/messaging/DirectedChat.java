package dev.synapsehub.core.messaging;

/**
 * The facts of a stored directed chat an {@code ack} needs: who sent it to whom. The core
 * remembers recent ones; for older seqs the edge resolves them from the journal.
 *
 * @param channel the private channel, or null; channel chats never move a watermark
 * @param clientMsgId the kept retry identity, or null
 */
public record DirectedChat(long seq, long msgId, String sender, String target, String channel, String clientMsgId) {
}
