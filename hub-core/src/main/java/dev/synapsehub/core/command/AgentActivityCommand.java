package dev.synapsehub.core.command;

/**
 * The name bound a socket or sent a non-heartbeat frame: clears its dead-letter entry (§8.2).
 * Decides to no event when there is nothing to clear. A chat clears its sender by itself.
 */
public record AgentActivityCommand(String agent) implements MessagingCommand {
}
