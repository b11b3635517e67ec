package dev.synapsehub.core.reply;

/** The outcome of agent activity: whether a dead-letter entry was cleared. No frame. */
public record ActivityReply(String agent, boolean cleared) implements Reply {
}
