package dev.synapsehub.core.messaging;

/**
 * A retained chat (bounded history, §5.19/§5.20).
 *
 * @param seq the journal sequence of its {@code chat} event (not part of the retained frame)
 * @param target the target as sent, or null when the client sent none
 * @param channel the private channel, or null
 * @param frameJson the frame as fanned out, without {@code seq}
 */
public record ChatRecord(long msgId, long seq, String sender, String target, String channel, double ts,
        String frameJson) {
    /** Whether the target is directed (§8.1). */
    public boolean directed() {
        return AddressMatcher.isDirected(target);
    }
}
