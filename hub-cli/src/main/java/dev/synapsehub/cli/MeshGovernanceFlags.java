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
 * the watched peers' labels and the claim and relay routes' hub ids as the flags give them,
 * whether a serving policy is configured, the operator relay policy and the default delivery.
 * Ports, paths, URIs, pins and tokens are per node (or secret) and are not part of it. With
 * {@code --federation-peers} the three route settings read {@value #PEERS_FILE}: the file is
 * per node and reloaded while the node runs (like the serving policy's contents), so its routes
 * as read at start would make a later restart of one node, after a live edit of every node's
 * file, a lasting mismatch.
 */
final class MeshGovernanceFlags {
    private MeshGovernanceFlags() {
    }

    /** The canonical value of a route setting whose routes come from the (reloadable) peers file. */
    static final String PEERS_FILE = "peers_file";

    /** This node's settings from its validated flags (with a peers file, its routes are not compared). */
    static MeshGovernanceSettings of(String hubId, FederationSettings federation, String defaultDelivery,
                                     boolean servingPolicy) {
        MeshGovernanceSettings s = of(hubId, federation.owners(), federation.watch(), federation.forward(),
                federation.relayRoutes(), federation.relay(), defaultDelivery, servingPolicy);
        if (federation.peersFile() == null) {
            return s;
        }
        Map<String, String> values = new LinkedHashMap<>(s.settings());
        for (String route : new String[] {"multihub_watch", "claim_peer", MeshGovernanceSettings.RELAY_PEER}) {
            values.put(route, PEERS_FILE);
        }
        return MeshGovernanceSettings.of(values);
    }

    /** This node's settings from its validated flags. */
    static MeshGovernanceSettings of(String hubId, NamespaceOwners owners, WatchSettings watch,
                                     ForwardSettings forward, ForwardSettings relayRoutes,
                                     FederationSettings.RelayPolicy relay, String defaultDelivery,
                                     boolean servingPolicy) {
        Map<String, String> s = new LinkedHashMap<>();
        s.put("hub_id", hubId);
        s.put(MeshGovernanceSettings.NAMESPACE_OWNER, MeshGovernanceSettings.map(owners.owners()));
        s.put("multihub_watch", MeshGovernanceSettings.set(watch.peers().stream().map(WatchPeer::label).toList()));
        s.put("claim_peer", MeshGovernanceSettings.set(forward.routes().keySet()));
        s.put(MeshGovernanceSettings.RELAY_PEER, MeshGovernanceSettings.set(relayRoutes.routes().keySet()));
        s.put("multihub_serving_policy", servingPolicy ? "configured" : "none");
        s.put(MeshGovernanceSettings.REQUIRE_RELAY_REASON, String.valueOf(relay.requireReason()));
        s.put(MeshGovernanceSettings.REQUIRE_TWO_PERSON_RELAY, String.valueOf(relay.twoPerson()));
        s.put("default_delivery", defaultDelivery);
        return MeshGovernanceSettings.of(s);
    }
}
