package dev.synapsehub.federation.route;

import dev.synapsehub.federation.trust.PeerRoute;
import dev.synapsehub.federation.trust.PeerRouteSource;
import dev.synapsehub.federation.trust.PeerRoutes;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;

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

    /**
     * The route a forward is sent on to {@code owner}, from {@code source}'s routes as they are now
     * ({@code kind} picks the claim or relay routes; {@code flag} names them in the error).
     *
     * @throws NoRoute the peers file does not validate, or it has no such route: the forward is
     *     answered as a transport failure, never sent on an old route
     */
    static PeerRoute forwardRoute(PeerRouteSource source, Function<PeerRoutes, Map<String, PeerRoute>> kind,
                                  String flag, String owner) throws NoRoute {
        PeerRoute to;
        try {
            to = kind.apply(source.current()).get(owner);
        } catch (IOException invalid) {
            throw new NoRoute(invalid.getMessage());
        }
        if (to == null) {
            throw new NoRoute("no " + flag + " route to " + owner);
        }
        return to;
    }

    /** No route to send a forward on; the message is the transport failure's detail. */
    static final class NoRoute extends Exception {
        NoRoute(String detail) {
            super(detail);
        }
    }
}
