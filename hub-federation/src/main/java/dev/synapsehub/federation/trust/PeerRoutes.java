package dev.synapsehub.federation.trust;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The routes this hub uses to reach peer hubs, as one value: the watched peers (by label), the
 * owners claims are forwarded to and the owners operator relays are sent to (by hub id). Given by
 * flags (fixed at start) or by a peers file ({@link PeersFile}, checked about once a second on a
 * thread of its own).
 */
public record PeerRoutes(Map<String, PeerRoute> watch, Map<String, PeerRoute> claim, Map<String, PeerRoute> relay) {
    /** No route at all. */
    public static final PeerRoutes NONE = new PeerRoutes(Map.of(), Map.of(), Map.of());

    public PeerRoutes {
        watch = Collections.unmodifiableMap(new LinkedHashMap<>(watch));
        claim = Collections.unmodifiableMap(new LinkedHashMap<>(claim));
        relay = Collections.unmodifiableMap(new LinkedHashMap<>(relay));
    }

    /** True when no route of any kind is given. */
    public boolean isEmpty() {
        return watch.isEmpty() && claim.isEmpty() && relay.isEmpty();
    }
}
