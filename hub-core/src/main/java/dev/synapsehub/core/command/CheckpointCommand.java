package dev.synapsehub.core.command;

/**
 * Save an opaque resume token on a held task.
 *
 * @param epoch optional epoch fence
 */
public record CheckpointCommand(String agent, String taskId, String checkpoint, Long epoch) implements ClaimFamilyCommand {
}
