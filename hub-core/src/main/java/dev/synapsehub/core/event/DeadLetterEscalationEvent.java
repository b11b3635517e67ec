package dev.synapsehub.core.event;


/** Audit: every N-th dead letter to a target was escalated (broadcast). Changes no state on replay. */
public record DeadLetterEscalationEvent(double ts, String target, long count, String lastSender, int threshold) implements CoordinationEvent {
    @Override
    public String kind() {
        return "dead_letter_escalation";
    }

    @Override
    public Durability durability() {
        return Durability.FULL;
    }
}
