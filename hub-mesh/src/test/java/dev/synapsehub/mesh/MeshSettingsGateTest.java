package dev.synapsehub.mesh;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static dev.synapsehub.mesh.MeshSettingsGate.Verb.CLAIM;
import static dev.synapsehub.mesh.MeshSettingsGate.Verb.PEER_CLAIM;
import static dev.synapsehub.mesh.MeshSettingsGate.Verb.RELAY;
import static dev.synapsehub.mesh.MeshSettingsGate.refuses;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which decisions a mesh node refuses by its governance settings check (docs/mesh.md, "Nodes
 * agree on their governance settings"): every decision it would take by its own flags while
 * they differ from the leader's, or before it has compared them while it holds a map.
 */
class MeshSettingsGateTest {
    private static final MeshGovernanceSettings LEADER = MeshGovernanceSettings.of(Map.of(
            "namespace_owner", "proj=hub-m", "require_two_person_relay", "true", "default_delivery", "broadcast"));

    @Test
    void aMismatchedMapRefusesAgentsClaimsPeersForwardedClaimsAndOperatorRelays() {
        MeshGovernanceSettings own = MeshGovernanceSettings.of(Map.of(
                "namespace_owner", "lab=hub-a,proj=hub-m", "require_two_person_relay", "true",
                "default_delivery", "broadcast"));
        MeshSettingsCheck.View v = mismatch(own, LEADER);
        assertThat(v.differing()).containsExactly("namespace_owner");
        assertThat(refuses(CLAIM, v, own)).isTrue();
        assertThat(refuses(PEER_CLAIM, v, own)).isTrue(); // it would resolve the peer's namespace by its own map
        assertThat(refuses(RELAY, v, own)).isTrue(); // namespace_not_owned is decided by the map too
    }

    @Test
    void aDifferingRelayPolicyRefusesOperatorRelaysEvenWithoutAMap() {
        MeshGovernanceSettings leader = MeshGovernanceSettings.of(Map.of("require_two_person_relay", "true"));
        MeshGovernanceSettings own = MeshGovernanceSettings.of(Map.of("require_two_person_relay", "false"));
        MeshSettingsCheck.View v = mismatch(own, leader);
        // a single operator's release here would bypass the cluster's two-person approval
        assertThat(refuses(RELAY, v, own)).isTrue();
        assertThat(refuses(CLAIM, v, own)).isFalse();
        assertThat(refuses(PEER_CLAIM, v, own)).isFalse();
        MeshGovernanceSettings routes = MeshGovernanceSettings.of(Map.of("relay_peer", "hub-x"));
        assertThat(refuses(RELAY, mismatch(routes, MeshGovernanceSettings.NONE), routes)).isTrue();
        MeshGovernanceSettings reason = MeshGovernanceSettings.of(Map.of("require_relay_reason", "false"));
        MeshGovernanceSettings leaderReason = MeshGovernanceSettings.of(Map.of("require_relay_reason", "true"));
        assertThat(refuses(RELAY, mismatch(reason, leaderReason), reason)).isTrue();
    }

    @Test
    void aMismatchThatDecidesNothingHereRefusesNothing() {
        MeshGovernanceSettings leader = MeshGovernanceSettings.of(Map.of("default_delivery", "broadcast"));
        MeshGovernanceSettings own = MeshGovernanceSettings.of(Map.of("default_delivery", "scoped"));
        MeshSettingsCheck.View v = mismatch(own, leader);
        for (MeshSettingsGate.Verb verb : MeshSettingsGate.Verb.values()) {
            assertThat(refuses(verb, v, own)).as(verb.name()).isFalse();
        }
    }

    @Test
    void aNodeWithAMapRefusesUntilItHasComparedAndOneWithoutDoesNot() {
        MeshGovernanceSettings withMap = LEADER;
        for (MeshSettingsGate.Verb verb : MeshSettingsGate.Verb.values()) {
            assertThat(refuses(verb, MeshSettingsCheck.View.UNKNOWN, withMap)).as(verb.name()).isTrue();
            assertThat(refuses(verb, MeshSettingsCheck.View.UNKNOWN, MeshGovernanceSettings.NONE)).as(verb.name())
                    .isFalse();
            MeshSettingsCheck.View agree = new MeshSettingsCheck.View(MeshSettingsCheck.State.AGREE, "n1", withMap,
                    List.of());
            assertThat(refuses(verb, agree, withMap)).as(verb.name()).isFalse();
        }
    }

    @Test
    void theFramesTheGateDecidesAboutAreTheThreeThatDecideByThisNodesFlags() {
        assertThat(MeshSettingsGate.Verb.of("claim")).isEqualTo(CLAIM);
        assertThat(MeshSettingsGate.Verb.of("multihub_claim_request")).isEqualTo(PEER_CLAIM);
        assertThat(MeshSettingsGate.Verb.of("operator_relay_request")).isEqualTo(RELAY);
        assertThat(MeshSettingsGate.Verb.of("release")).isNull();
        assertThat(MeshSettingsGate.Verb.of("multihub_log_request")).isNull();
    }

    private static MeshSettingsCheck.View mismatch(MeshGovernanceSettings own, MeshGovernanceSettings leader) {
        return new MeshSettingsCheck.View(MeshSettingsCheck.State.MISMATCH, "n1", leader, own.differing(leader));
    }
}
