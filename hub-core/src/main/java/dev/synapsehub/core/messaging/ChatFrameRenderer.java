package dev.synapsehub.core.messaging;

/**
 * Builds the chat frame as fanned out (without {@code seq}) once the core has stamped it; the
 * edge owns JSON, so it supplies this. The result is journaled and retained verbatim.
 */
@FunctionalInterface
public interface ChatFrameRenderer {
    /** The compact JSON of the outgoing chat frame for this stamp. */
    String render(ChatStamp stamp);
}
