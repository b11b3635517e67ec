package dev.synapsehub.core.command;

/** A lease-family command: claim, release, task_update, handoff, checkpoint. */
public sealed interface ClaimFamilyCommand extends Command
        permits ClaimCommand, ReleaseCommand, TaskUpdateCommand, HandoffCommand, CheckpointCommand {
    /** The task the command is about, as sent (the core trims it). */
    String taskId();
}
