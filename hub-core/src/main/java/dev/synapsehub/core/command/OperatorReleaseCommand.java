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
 * @param approver with a two-person relay ({@code --require-two-person-relay}) decided by the
 *        writer (a mesh), the verified principal asking: the first is recorded as a replicated
 *        approval ({@link dev.synapsehub.core.state.RelayApprovals}), a distinct second one
 *        releases; null when one operator suffices (or the edge already counted the two)
 */
public record OperatorReleaseCommand(String agent, String namespace, String taskId, String auditPayloadJson,
                                     String approver) implements Command {
    public OperatorReleaseCommand {
        Objects.requireNonNull(agent, "agent");
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(taskId, "taskId");
        Objects.requireNonNull(auditPayloadJson, "auditPayloadJson");
    }

    /** A release one operator suffices for. */
    public OperatorReleaseCommand(String agent, String namespace, String taskId, String auditPayloadJson) {
        this(agent, namespace, taskId, auditPayloadJson, null);
    }
}
