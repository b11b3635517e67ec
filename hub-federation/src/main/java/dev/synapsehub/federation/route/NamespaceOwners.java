package dev.synapsehub.federation.route;

import java.util.Map;
import java.util.TreeMap;

/**
 * The ownership map of contract §11.3 ({@code --namespace-owner NS=HUB_ID}): which hub owns each
 * namespace. Empty means federation ownership is off and every claim is decided locally, as a
 * single hub does (INV-MH-4).
 */
public record NamespaceOwners(String localHubId, Map<String, String> owners) {
    public NamespaceOwners {
        owners = java.util.Collections.unmodifiableMap(new TreeMap<>(owners));
    }

    /** No map: a default hub. */
    public static NamespaceOwners none(String localHubId) {
        return new NamespaceOwners(localHubId, Map.of());
    }

    /** True when an ownership map is configured. */
    public boolean configured() {
        return !owners.isEmpty();
    }

    /** The owner of {@code namespace}, or null when it is ungoverned. */
    public String owner(String namespace) {
        return owners.get(namespace);
    }
}
