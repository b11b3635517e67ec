package dev.synapsehub.core.board;

import java.util.List;
import java.util.Objects;

/**
 * A task on the shared board, exactly the wire's task object (§6.4). Immutable; every change
 * is a new snapshot with a higher version.
 */
public record BoardTask(
        String taskId,
        String title,
        String description,
        List<String> dependsOn,
        BoardStatus status,
        String suggestedOwner,
        String project,
        long version,
        String createdBy,
        double createdAt,
        double updatedAt) {
    public BoardTask {
        Objects.requireNonNull(taskId, "taskId");
        Objects.requireNonNull(status, "status");
        title = title == null ? "" : title;
        description = description == null ? "" : description;
        dependsOn = dependsOn == null ? List.of() : List.copyOf(dependsOn);
        suggestedOwner = suggestedOwner == null ? "" : suggestedOwner;
        project = project == null ? "" : project;
        createdBy = createdBy == null ? "" : createdBy;
    }
}
