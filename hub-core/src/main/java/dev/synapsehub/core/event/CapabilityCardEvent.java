package dev.synapsehub.core.event;

import java.util.Objects;

/**
 * A persistent capability card was registered (contract §5.15; ours: the reference keeps
 * cards out of its journal, we journal persistent ones so they survive a restart).
 *
 * @param agent the identity the card is for
 * @param cardJson the card object as broadcast
 */
public record CapabilityCardEvent(double ts, String agent, String cardJson) implements CoordinationEvent {
    public CapabilityCardEvent {
        Objects.requireNonNull(agent, "agent");
        if (cardJson == null || !cardJson.startsWith("{") || !cardJson.endsWith("}")) {
            throw new IllegalArgumentException("a card is a JSON object");
        }
    }

    @Override
    public String kind() {
        return "capability_card";
    }

    @Override
    public Durability durability() {
        return Durability.NORMAL;
    }
}
