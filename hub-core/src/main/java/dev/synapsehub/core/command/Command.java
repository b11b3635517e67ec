package dev.synapsehub.core.command;

/** A validated request to the coordination core; the edge builds these from wire frames. */
public sealed interface Command
        permits ClaimCommand, ReleaseCommand, TaskUpdateCommand, HandoffCommand, CheckpointCommand {
    /** The bound name of the agent acting. */
    String agent();

    /** The task the command is about, as sent (the core trims it). */
    String taskId();
}
