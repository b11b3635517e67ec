package dev.synapsehub.core.reply;

/** A persistent capability card was registered for {@code agent} at hub time {@code at}. */
public record CardReply(String agent, double at) implements Reply {
}
