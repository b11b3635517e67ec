package dev.synapsehub.federation.route;

import dev.synapsehub.federation.trust.PeerRoute;
import dev.synapsehub.federation.trust.PeerRouteSource;
import dev.synapsehub.federation.trust.PeerRoutes;

import java.util.LinkedHashMap;
import java.util.Map;

/** The routes the flags gave ({@code --claim-peer}, {@code --relay-peer}) as a fixed {@link PeerRouteSource}. */
public final class RouteLookup {
    private RouteLookup() {
    }

    /** {@code settings}' routes, each with the settings' token. */
    public static Map<String, PeerRoute> of(ForwardSettings settings) {
        Map<String, PeerRoute> out = new LinkedHashMap<>();
        settings.routes().forEach((hub, r) -> out.put(hub, new PeerRoute(hub, r.uri(), r.pin(), settings.token())));
        return out;
    }

    /** Claim routes fixed at start. */
    public static PeerRouteSource fixedClaims(ForwardSettings settings) {
        return PeerRouteSource.fixed(new PeerRoutes(Map.of(), of(settings), Map.of()));
    }

    /** Relay routes fixed at start. */
    public static PeerRouteSource fixedRelays(ForwardSettings settings) {
        return PeerRouteSource.fixed(new PeerRoutes(Map.of(), Map.of(), of(settings)));
    }
}
