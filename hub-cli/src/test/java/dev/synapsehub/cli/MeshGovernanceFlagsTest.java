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

    @Test
    void eachConsumeLivenessFlagIsComparedSinceTheOriginNodesVerdictDecidesAReplicatedDeadLetter() {
        MeshGovernanceSettings defaults = settings(MeshGovernanceFlags.Liveness.DEFAULT);
        MeshGovernanceSettings off = settings(new MeshGovernanceFlags.Liveness(false, 90, 20));
        MeshGovernanceSettings recipient = settings(new MeshGovernanceFlags.Liveness(true, 45, 20));
        MeshGovernanceSettings waiter = settings(new MeshGovernanceFlags.Liveness(true, 90, 0.5));
        assertThat(off.differing(defaults)).containsExactly("warn_stale_recipients");
        assertThat(recipient.differing(defaults)).containsExactly("recipient_liveness_window");
        assertThat(waiter.differing(defaults)).containsExactly("waiter_liveness_window");
        assertThat(off.get("warn_stale_recipients")).isEqualTo("false");
        assertThat(recipient.get("recipient_liveness_window")).isEqualTo("45");
        assertThat(waiter.get("waiter_liveness_window")).isEqualTo("0.5");
        assertThat(recipient.fingerprint()).isNotEqualTo(defaults.fingerprint());
        // a window given as 45, 45.0 or 4.5e1 is one value
        assertThat(settings(new MeshGovernanceFlags.Liveness(true, 4.5e1, 20.0)).fingerprint())
                .isEqualTo(recipient.fingerprint());
    }

    @Test
    void atTheDefaultsTheFingerprintIsTheOneANodeOfAnEarlierVersionReportsAndAnotherValueDiffersFromIt() {
        // what a node of the version before the liveness settings were compared reports for the same flags
        MeshGovernanceSettings older = MeshGovernanceSettings.of(Map.of("claim_peer", "", "default_delivery",
                "broadcast", "hub_id", "hub-m", "multihub_serving_policy", "none", "multihub_watch", "",
                "namespace_owner", "lab=hub-a,proj=hub-m", "relay_peer", "", "require_relay_reason", "false",
                "require_two_person_relay", "false"));
        MeshGovernanceSettings defaults = settings(MeshGovernanceFlags.Liveness.DEFAULT);
        assertThat(defaults.differing(older)).isEmpty();
        assertThat(defaults.fingerprint()).isEqualTo(older.fingerprint());
        // another value cannot be shown to be shared by a node that does not report it: reported, fail closed
        assertThat(settings(new MeshGovernanceFlags.Liveness(false, 90, 20)).differing(older))
                .containsExactly("warn_stale_recipients");
    }

    private static MeshGovernanceSettings settings(ForwardSettings claim, ForwardSettings relay, Path peersFile) {
        return settings(claim, relay, peersFile, MeshGovernanceFlags.Liveness.DEFAULT);
    }

    private static MeshGovernanceSettings settings(MeshGovernanceFlags.Liveness liveness) {
        return settings(ForwardSettings.none(), ForwardSettings.none(), null, liveness);
    }

    private static MeshGovernanceSettings settings(ForwardSettings claim, ForwardSettings relay, Path peersFile,
                                                   MeshGovernanceFlags.Liveness liveness) {
        FederationSettings federation = new FederationSettings(null, WatchSettings.none(), OWNERS, claim, null,
                FederationSettings.RelayPolicy.DEFAULT, relay, peersFile);
        return MeshGovernanceFlags.of("hub-m", federation, "broadcast", false, liveness);
    }

    private static ForwardSettings routes(String hub) {
        return new ForwardSettings(ForwardSettings.byHub(List.of(new ClaimRoute(hub, URI.create("wss://127.0.0.1:9/"),
                null))), null, null, null, ForwardSettings.BOUND);
    }
}
