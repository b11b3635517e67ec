package dev.synapsehub.core.reply;

/** The answer to a card removal: whether {@code agent} had a persistent card that is now gone. */
public record CardRemovedReply(String agent, boolean removed, double at) implements Reply {
}
