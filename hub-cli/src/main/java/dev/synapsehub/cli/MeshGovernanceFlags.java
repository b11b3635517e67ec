package dev.synapsehub.cli;

import dev.synapsehub.federation.FederationSettings;
import dev.synapsehub.federation.follow.WatchPeer;
import dev.synapsehub.federation.follow.WatchSettings;
import dev.synapsehub.federation.route.ForwardSettings;
import dev.synapsehub.federation.route.NamespaceOwners;
import dev.synapsehub.mesh.MeshGovernanceSettings;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The start flags of a mesh node that every node must share, in their canonical form
 * (docs/mesh.md, "Nodes agree on their governance settings"): the hub id, the ownership map,
 * the watched peers' labels, the claim and relay routes' hub ids (from the flags, or the peers
 * file as read at start), whether a serving policy is configured,
 * the operator relay policy and the default delivery. Ports, paths, URIs, pins and tokens are
 * per node (or secret) and are not part of it.
 */
final class MeshGovernanceFlags {
    private MeshGovernanceFlags() {
    }

    /** This node's settings from its validated flags (the peers file's routes as read at start). */
    static MeshGovernanceSettings of(String hubId, FederationSettings federation, String defaultDelivery,
                                     boolean servingPolicy) {
        return of(hubId, federation.owners(), federation.watch(), federation.forward(), federation.relayRoutes(),
                federation.relay(), defaultDelivery, servingPolicy);
    }

    /** This node's settings from its validated flags. */
    static MeshGovernanceSettings of(String hubId, NamespaceOwners owners, WatchSettings watch,
                                     ForwardSettings forward, ForwardSettings relayRoutes,
                                     FederationSettings.RelayPolicy relay, String defaultDelivery,
                                     boolean servingPolicy) {
        Map<String, String> s = new LinkedHashMap<>();
        s.put("hub_id", hubId);
        s.put("namespace_owner", MeshGovernanceSettings.map(owners.owners()));
        s.put("multihub_watch", MeshGovernanceSettings.set(watch.peers().stream().map(WatchPeer::label).toList()));
        s.put("claim_peer", MeshGovernanceSettings.set(forward.routes().keySet()));
        s.put("relay_peer", MeshGovernanceSettings.set(relayRoutes.routes().keySet()));
        s.put("multihub_serving_policy", servingPolicy ? "configured" : "none");
        s.put("require_relay_reason", String.valueOf(relay.requireReason()));
        s.put("require_two_person_relay", String.valueOf(relay.twoPerson()));
        s.put("default_delivery", defaultDelivery);
        return MeshGovernanceSettings.of(s);
    }
}
