package dev.synapsehub.federation.route;

import dev.synapsehub.federation.trust.PeerRoute;
import dev.synapsehub.federation.trust.PeerRouteSource;
import dev.synapsehub.federation.trust.PeerRoutes;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.URI;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The route lookup a forwarded claim and a forwarded relay share: the kind's route, or why there is none. */
class RouteLookupTest {
    private static final PeerRoute CLAIM_B = new PeerRoute("hub-b", URI.create("wss://127.0.0.1:9001/"), null, "t");
    private static final PeerRoute RELAY_C = new PeerRoute("hub-c", URI.create("wss://127.0.0.1:9002/"), null, null);
    private static final PeerRouteSource ROUTES = PeerRouteSource.fixed(
            new PeerRoutes(Map.of(), Map.of("hub-b", CLAIM_B), Map.of("hub-c", RELAY_C)));

    @Test
    void findsTheRouteOfTheKindAsked() throws Exception {
        assertThat(RouteLookup.forwardRoute(ROUTES, PeerRoutes::claim, "--claim-peer", "hub-b")).isEqualTo(CLAIM_B);
        assertThat(RouteLookup.forwardRoute(ROUTES, PeerRoutes::relay, "--relay-peer", "hub-c")).isEqualTo(RELAY_C);
    }

    @Test
    void aRouteOfAnotherKindIsNoRoute() {
        assertThatThrownBy(() -> RouteLookup.forwardRoute(ROUTES, PeerRoutes::relay, "--relay-peer", "hub-b"))
                .isInstanceOf(RouteLookup.NoRoute.class).hasMessage("no --relay-peer route to hub-b");
        assertThatThrownBy(() -> RouteLookup.forwardRoute(ROUTES, PeerRoutes::claim, "--claim-peer", "hub-c"))
                .isInstanceOf(RouteLookup.NoRoute.class).hasMessage("no --claim-peer route to hub-c");
    }

    @Test
    void routesThatCannotBeKnownAreNoRouteWithTheirReason() {
        PeerRouteSource invalid = () -> {
            throw new IOException("peers.json line 3: duplicate hub 'hub-b'");
        };
        assertThatThrownBy(() -> RouteLookup.forwardRoute(invalid, PeerRoutes::claim, "--claim-peer", "hub-b"))
                .isInstanceOf(RouteLookup.NoRoute.class).hasMessage("peers.json line 3: duplicate hub 'hub-b'");
    }
}
