package dev.synapsehub.core.command;

/**
 * Release a held task.
 *
 * @param epoch optional fence; when present it must equal the claim's epoch
 * @param assessment the text of the {@code assessment} progress note a release with evidence
 *     posts (contract §A11 R3), decided and journaled with the release; null for none
 */
public record ReleaseCommand(String agent, String taskId, Long epoch, String assessment)
        implements ClaimFamilyCommand {
    /** A release without evidence. */
    public ReleaseCommand(String agent, String taskId, Long epoch) {
        this(agent, taskId, epoch, null);
    }
}
