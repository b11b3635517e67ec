package dev.synapsehub.federation.trust;

import java.io.IOException;

/**
 * Where the peer routes in force come from, asked before each peer operation (a poll, a
 * forwarded claim, a relay, a dead-letter report), some on event loops: {@link #current()} must
 * not block (a peers file answers what its watcher thread last found).
 */
public interface PeerRouteSource {
    /**
     * The routes in force now.
     *
     * @throws IOException while they cannot be known (a peers file that does not validate): the
     *                     operation is refused as a transport failure, never decided on the routes
     *                     that were in force before
     */
    PeerRoutes current() throws IOException;

    /** True when routes can change while the hub runs (a peers file). */
    default boolean reloads() {
        return false;
    }

    /** Routes given by flags: fixed for the life of the hub. */
    static PeerRouteSource fixed(PeerRoutes routes) {
        return () -> routes;
    }
}
