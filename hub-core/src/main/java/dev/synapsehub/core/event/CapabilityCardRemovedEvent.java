package dev.synapsehub.core.event;

import java.util.Objects;

/**
 * A persistent capability card was removed (ours, {@code card_remove}): after it, and after a
 * replay or a restart, the identity has no persistent card until it advertises one again.
 *
 * @param agent the identity whose card was removed
 */
public record CapabilityCardRemovedEvent(double ts, String agent) implements CoordinationEvent {
    public CapabilityCardRemovedEvent {
        Objects.requireNonNull(agent, "agent");
    }

    @Override
    public String kind() {
        return "capability_card_removed";
    }

    @Override
    public Durability durability() {
        return Durability.NORMAL;
    }
}
