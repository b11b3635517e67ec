package dev.synapsehub.core.command;

import java.util.Objects;

/**
 * An operator relay's force-release (wire contract A5.1), authorised by the edge (serving
 * policy, scope, namespace ownership): releases {@code taskId} whoever holds it, provided its
 * owner is in {@code namespace}, and journals the {@code operator_relay} audit record with it.
 *
 * @param agent the authorised peer hub the request came from
 * @param namespace the namespace the task's owner must be in
 * @param auditPayloadJson the {@code operator_relay} record, a compact JSON object
 */
public record OperatorReleaseCommand(String agent, String namespace, String taskId, String auditPayloadJson)
        implements Command {
    public OperatorReleaseCommand {
        Objects.requireNonNull(agent, "agent");
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(taskId, "taskId");
        Objects.requireNonNull(auditPayloadJson, "auditPayloadJson");
    }
}
