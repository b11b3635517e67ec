package dev.synapsehub.cli;

import dev.synapsehub.federation.FederationSettings;
import dev.synapsehub.federation.follow.WatchSettings;
import dev.synapsehub.federation.route.ClaimRoute;
import dev.synapsehub.federation.route.ForwardSettings;
import dev.synapsehub.federation.route.NamespaceOwners;
import dev.synapsehub.mesh.MeshGovernanceSettings;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** Which start flags a mesh node's governance fingerprint covers (docs/mesh.md, "Nodes agree on their governance settings"). */
class MeshGovernanceFlagsTest {
    private static final NamespaceOwners OWNERS = new NamespaceOwners("hub-m", Map.of("proj", "hub-m", "lab", "hub-a"));

    @Test
    void routesFromThePeersFileAreNotPartOfTheFingerprintSinceTheFileIsReloadedWhileTheNodeRuns() {
        Path file = Path.of("/etc/synapse/peers.json");
        // node 1 read the file before a live edit added hub-a's routes, node 2 (restarted) after it
        MeshGovernanceSettings before = settings(ForwardSettings.none(), ForwardSettings.none(), file);
        MeshGovernanceSettings after = settings(routes("hub-a"), routes("hub-a"), file);
        assertThat(after.differing(before)).isEmpty();
        assertThat(after.fingerprint()).isEqualTo(before.fingerprint());
        assertThat(after.get("claim_peer")).isEqualTo(MeshGovernanceFlags.PEERS_FILE);
        assertThat(after.get("relay_peer")).isEqualTo(MeshGovernanceFlags.PEERS_FILE);
        assertThat(after.get("multihub_watch")).isEqualTo(MeshGovernanceFlags.PEERS_FILE);
    }

    @Test
    void routesGivenByFlagsAreFixedForTheNodesLifeAndCompared() {
        MeshGovernanceSettings none = settings(ForwardSettings.none(), ForwardSettings.none(), null);
        MeshGovernanceSettings some = settings(routes("hub-a"), routes("hub-a"), null);
        assertThat(some.differing(none)).containsExactly("claim_peer", "relay_peer");
        assertThat(some.get("claim_peer")).isEqualTo("hub-a");
        // flags on one node and a file on another still differ: they are different sources of routes
        assertThat(some.differing(settings(routes("hub-a"), routes("hub-a"), Path.of("peers.json"))))
                .containsExactly("claim_peer", "multihub_watch", "relay_peer");
    }

    private static MeshGovernanceSettings settings(ForwardSettings claim, ForwardSettings relay, Path peersFile) {
        FederationSettings federation = new FederationSettings(null, WatchSettings.none(), OWNERS, claim, null,
                FederationSettings.RelayPolicy.DEFAULT, relay, peersFile);
        return MeshGovernanceFlags.of("hub-m", federation, "broadcast", false);
    }

    private static ForwardSettings routes(String hub) {
        return new ForwardSettings(ForwardSettings.byHub(List.of(new ClaimRoute(hub, URI.create("wss://127.0.0.1:9/"),
                null))), null, null, null, ForwardSettings.BOUND);
    }
}
