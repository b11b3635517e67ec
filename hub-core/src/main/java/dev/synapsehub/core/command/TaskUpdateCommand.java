package dev.synapsehub.core.command;

/**
 * Update a held task's status, note or artefact reference.
 *
 * @param status new status in wire spelling; null or empty leaves it unchanged
 * @param note replacement note; null leaves it unchanged
 * @param dataRef replacement artefact reference; null leaves it unchanged
 * @param epoch optional epoch fence
 * @param expectedVersion optional version CAS
 */
public record TaskUpdateCommand(
        String agent,
        String taskId,
        String status,
        String note,
        String dataRef,
        Long epoch,
        Long expectedVersion) implements ClaimFamilyCommand {
}
