package dev.synapsehub.federation.testing;

import dev.synapsehub.federation.FederationSettings;
import dev.synapsehub.federation.follow.PollBudget;
import dev.synapsehub.federation.follow.WatchPeer;
import dev.synapsehub.federation.follow.WatchSettings;
import dev.synapsehub.federation.route.NamespaceOwners;
import dev.synapsehub.federation.trust.ServingTrust;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/** Settings of test hubs that follow peers. */
public final class Federation {
    private Federation() {
    }

    /** A watched peer pinned to its server certificate. */
    public static WatchPeer peer(String label, URI uri, Pki.HubCerts certs) {
        return new WatchPeer(label, uri, certs.server().pin());
    }

    /** Watch settings polling every second, presenting {@code self}'s client certificate. */
    public static WatchSettings watch(Pki.HubCerts self, List<WatchPeer> peers) {
        return new WatchSettings(peers, Duration.ofSeconds(1), null, self.clientFiles().cert(), self.clientFiles().key(),
                PollBudget.DEFAULT, Duration.ofSeconds(10));
    }

    /** A follower of {@code peers} (serving nobody) with the given ownership map. */
    public static FederationSettings follower(Pki.HubCerts self, List<WatchPeer> peers, Map<String, String> owners) {
        return new FederationSettings(ServingTrust.none(), watch(self, peers), new NamespaceOwners(self.hubId(), owners),
                dev.synapsehub.federation.route.ForwardSettings.none());
    }
}
