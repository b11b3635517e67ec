package dev.synapsehub.federation.route;

/**
 * Where a claim is decided (contract §11.3): {@code local} grants here; {@code remote} belongs to
 * another hub (forwarded when a route exists); {@code ungoverned} has no owner in the map;
 * {@code partitioned} is contested by a hub that is neither its owner nor this hub (INV-CR-4).
 * Only {@code local} grants here.
 */
public enum Ownership {
    LOCAL, REMOTE, UNGOVERNED, PARTITIONED;

    /** The wire text ({@code ownership} member). */
    public String wire() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
