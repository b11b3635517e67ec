package dev.synapsehub.core.event;


/**
 * The name bound a socket or sent a non-heartbeat frame: its dead-letter entry is cleared
 * (§8.2). A hub-specific kind; reference logs lack it and replay without it.
 */
public record DeadLetterClearedEvent(double ts, String name) implements CoordinationEvent {
    @Override
    public String kind() {
        return "dead_letter_cleared";
    }

    @Override
    public Durability durability() {
        return Durability.NORMAL;
    }
}
