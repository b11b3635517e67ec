package dev.synapsehub.core.governance;

import java.util.List;
import java.util.TreeSet;

/**
 * An unresolved partition of a governed namespace, as the last {@code multihub_partition}
 * record left it (contract §11.2): contested by hubs that are neither its owner nor this hub.
 *
 * @param contestingHubs sorted, without repeats
 */
public record Partition(String namespace, String ownerHubId, List<String> contestingHubs) {
    public Partition {
        contestingHubs = List.copyOf(new TreeSet<>(contestingHubs));
    }
}
