package dev.synapsehub.core.event;

/** A task was released by its owner; its retained checkpoint is dropped too (INV-CR-3). */
public record ClaimReleasedEvent(double ts, String taskId) implements CoordinationEvent {
    @Override
    public String kind() {
        return "release";
    }

    @Override
    public Durability durability() {
        return Durability.FULL;
    }
}
