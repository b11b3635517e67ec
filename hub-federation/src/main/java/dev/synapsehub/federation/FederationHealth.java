package dev.synapsehub.federation;

import dev.synapsehub.federation.link.ClientIdentity;
import dev.synapsehub.federation.trust.PeerRouteSource;
import dev.synapsehub.federation.trust.PeersFile;

import java.util.ArrayList;
import java.util.List;

/**
 * Why federation holds a hub {@code degraded} on {@code /health}: the states in which it refuses
 * every operation of a kind, which otherwise only a gauge or a log line would show.
 */
final class FederationHealth {
    /** {@code --federation-peers} does not validate: every peer operation is refused. */
    static final String PEERS_INVALID = "federation_peers_invalid";
    /** The multi-hub client certificate and key do not validate: every peer operation is refused. */
    static final String CLIENT_IDENTITY_INVALID = "federation_client_identity_invalid";
    /** A watched peer is quarantined for equivocation: it is not followed until an operator recovers it. */
    static final String PEER_QUARANTINED = "multihub_peer_quarantined";

    private FederationHealth() {
    }

    /**
     * The reasons that hold now, in a fixed order; {@code routes} and {@code identity} may be
     * null (not bound yet), {@code quarantined}: some watched peer is quarantined.
     */
    static List<String> degraded(PeerRouteSource routes, ClientIdentity identity, boolean quarantined) {
        List<String> out = new ArrayList<>(3);
        if (routes instanceof PeersFile peers && !peers.valid()) {
            out.add(PEERS_INVALID);
        }
        if (identity != null && !identity.valid()) {
            out.add(CLIENT_IDENTITY_INVALID);
        }
        if (quarantined) {
            out.add(PEER_QUARANTINED);
        }
        return out;
    }
}
