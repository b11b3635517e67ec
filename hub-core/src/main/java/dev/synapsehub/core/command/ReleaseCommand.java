package dev.synapsehub.core.command;

/**
 * Release a held task.
 *
 * @param epoch optional fence; when present it must equal the claim's epoch
 */
public record ReleaseCommand(String agent, String taskId, Long epoch) implements ClaimFamilyCommand {
}
