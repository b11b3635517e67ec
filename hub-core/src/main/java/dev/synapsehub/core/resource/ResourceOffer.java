package dev.synapsehub.core.resource;

import java.util.Objects;

/**
 * A resource offer (wire contract §5.10, journal kind {@code resource}).
 *
 * @param capacity at least one
 * @param meta the offer's {@code meta} object as compact JSON, opaque to the core ({@code {}} when absent)
 * @param offeredAt hub time of the latest offer or refresh
 */
public record ResourceOffer(String agent, String kind, String name, int capacity, String meta, double offeredAt) {
    public ResourceOffer {
        Objects.requireNonNull(agent, "agent");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(name, "name");
        capacity = Math.max(1, capacity);
        meta = meta == null || meta.isBlank() ? "{}" : meta;
    }

    /** The registry key {@code <agent>:<kind>:<name>}. */
    public String key() {
        return key(agent, kind, name);
    }

    /** The registry key for an (agent, kind, name) triple. */
    public static String key(String agent, String kind, String name) {
        return agent + ":" + kind + ":" + name;
    }
}
