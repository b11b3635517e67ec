package dev.synapsehub.federation;

import dev.synapsehub.federation.follow.WatchSettings;
import dev.synapsehub.federation.route.ForwardSettings;
import dev.synapsehub.federation.route.NamespaceOwners;
import dev.synapsehub.federation.trust.ServingTrust;

/**
 * Everything federation needs, validated once at start-up.
 *
 * @param trust who may pull this hub's log and forward claims to it
 * @param watch the peers whose logs this hub follows
 * @param owners which hub owns each namespace (empty: every claim is local)
 * @param forward where claims owned by other hubs are forwarded
 * @param offerFile this hub's own bundle, served to {@code federation_offer_request} (null: none)
 * @param relay how operator relays are accepted ({@code --require-relay-reason},
 *        {@code --require-two-person-relay})
 * @param relayRoutes where operator relays for namespaces owned by other hubs are sent
 *        ({@code --relay-peer}; none: such relays are decided, and refused, here)
 * @param peersFile the peers file ({@code --federation-peers}) the routes come from, checked
 *        about once a second on a thread of its own; null: the routes of {@code watch}, {@code forward} and
 *        {@code relayRoutes} (flags) are fixed. With a file, those hold the routes it gave at start.
 */
public record FederationSettings(ServingTrust trust, WatchSettings watch, NamespaceOwners owners,
                                 ForwardSettings forward, java.nio.file.Path offerFile, RelayPolicy relay,
                                 ForwardSettings relayRoutes, java.nio.file.Path peersFile) {
    /** Operator relay options (contract A5.1); both off by default. */
    public record RelayPolicy(boolean requireReason, boolean twoPerson) {
        /** Neither a reason nor a second operator required. */
        public static final RelayPolicy DEFAULT = new RelayPolicy(false, false);
    }

    public FederationSettings {
        relay = relay == null ? RelayPolicy.DEFAULT : relay;
        relayRoutes = relayRoutes == null ? ForwardSettings.none() : relayRoutes;
    }

    /** Settings with routes given by flags. */
    public FederationSettings(ServingTrust trust, WatchSettings watch, NamespaceOwners owners, ForwardSettings forward,
                              java.nio.file.Path offerFile, RelayPolicy relay, ForwardSettings relayRoutes) {
        this(trust, watch, owners, forward, offerFile, relay, relayRoutes, null);
    }

    /** Settings without relay routes. */
    public FederationSettings(ServingTrust trust, WatchSettings watch, NamespaceOwners owners, ForwardSettings forward,
                              java.nio.file.Path offerFile, RelayPolicy relay) {
        this(trust, watch, owners, forward, offerFile, relay, ForwardSettings.none());
    }

    /** Settings without an offered bundle. */
    public FederationSettings(ServingTrust trust, WatchSettings watch, NamespaceOwners owners, ForwardSettings forward) {
        this(trust, watch, owners, forward, null, RelayPolicy.DEFAULT);
    }

    /** Settings with the default relay policy. */
    public FederationSettings(ServingTrust trust, WatchSettings watch, NamespaceOwners owners, ForwardSettings forward,
                              java.nio.file.Path offerFile) {
        this(trust, watch, owners, forward, offerFile, RelayPolicy.DEFAULT);
    }

    /**
     * Whether this hub links to another hub: it follows a peer's log, forwards claims or relays
     * to one, or reads its routes from a peers file (which may name some later).
     */
    public boolean linksPeers() {
        return !watch.peers().isEmpty() || !forward.routes().isEmpty() || !relayRoutes.routes().isEmpty()
                || peersFile != null;
    }

    /** No federation: no peer served, none followed, every claim local. */
    public static FederationSettings none(String hubId) {
        return new FederationSettings(ServingTrust.none(), WatchSettings.none(), NamespaceOwners.none(hubId),
                ForwardSettings.none());
    }
}
