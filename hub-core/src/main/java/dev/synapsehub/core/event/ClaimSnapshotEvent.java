package dev.synapsehub.core.event;

import dev.synapsehub.core.claim.Claim;

/**
 * A claim-family event carrying the full claim after the change: a grant ({@code claim}),
 * an update ({@code task_update}), a checkpoint ({@code checkpoint}) or a handoff
 * ({@code handoff}). All four replay identically: the snapshot becomes the task's claim.
 */
public record ClaimSnapshotEvent(double ts, Kind change, Claim claim) implements CoordinationEvent {

    /** Which verb produced the snapshot. */
    public enum Kind {
        CLAIM("claim"), TASK_UPDATE("task_update"), CHECKPOINT("checkpoint"), HANDOFF("handoff");

        private final String label;

        Kind(String label) {
            this.label = label;
        }

        /** The journal kind label. */
        public String label() {
            return label;
        }
    }

    @Override
    public String kind() {
        return change.label();
    }

    @Override
    public Durability durability() {
        return Durability.FULL;
    }
}
