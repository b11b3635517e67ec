package dev.synapsehub.core.event;

import java.util.Set;

/**
 * An audit-only record authored outside the coordination core (federation: a partition entered
 * or healed, a peer's equivocation and its recovery, a peer's dead-letter forwarding; the edge:
 * guard-denial evidence, A3; contract §12.3–12.4). Journaled at FULL;
 * never changes state, live or on replay (INV-RR-3). The payload is the stored JSON object,
 * opaque to the core.
 */
public record AuditRecordEvent(double ts, String kind, String payloadJson) implements CoordinationEvent {
    /** The kinds this record may carry. */
    public static final Set<String> KINDS = Set.of("multihub_partition", "multihub_heal", "multihub_equivocation",
            "multihub_equivocation_recovery", "operator_relay", "guard_denial", "dead_letter_forwarding");

    public AuditRecordEvent {
        if (!KINDS.contains(kind)) {
            throw new IllegalArgumentException("not an audit record kind: " + kind);
        }
        if (payloadJson == null || !payloadJson.startsWith("{") || !payloadJson.endsWith("}")) {
            throw new IllegalArgumentException("an audit record's payload is a JSON object");
        }
    }

    @Override
    public Durability durability() {
        return Durability.FULL;
    }
}
