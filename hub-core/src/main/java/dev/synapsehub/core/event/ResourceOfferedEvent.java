package dev.synapsehub.core.event;

import dev.synapsehub.core.resource.ResourceOffer;

/** An offer was made or refreshed; apply sets it under its key. */
public record ResourceOfferedEvent(double ts, ResourceOffer offer) implements CoordinationEvent {
    @Override
    public String kind() {
        return "resource";
    }

    @Override
    public Durability durability() {
        return Durability.NORMAL;
    }
}
