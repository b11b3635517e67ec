package dev.synapsehub.cli;

import dev.synapsehub.federation.FederationSettings;
import dev.synapsehub.federation.follow.WatchPeer;
import dev.synapsehub.federation.follow.WatchSettings;
import dev.synapsehub.federation.route.ForwardSettings;
import dev.synapsehub.federation.route.NamespaceOwners;
import dev.synapsehub.mesh.MeshGovernanceSettings;
import dev.synapsehub.net.HubConfig;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The start flags of a mesh node that every node must share, in their canonical form
 * (docs/mesh.md, "Nodes agree on their governance settings"): the hub id, the ownership map,
 * the watched peers' labels and the claim and relay routes' hub ids as the flags give them,
 * whether a serving policy is configured, the operator relay policy, the default delivery and,
 * when not at their defaults, the consume-liveness flags (see {@link Liveness}).
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

    /**
     * The consume-liveness flags (contract §8.6): {@code --warn-stale-recipients} and the recipient and
     * waiter windows. A mesh node judges a directed chat's recipients live by its own flags before the
     * leader decides it, and that verdict is replicated: whether the chat is dead-lettered (the
     * cluster's count behind {@code --dead-letter-escalation}) and its receipt. So they must agree.
     *
     * @param warnStaleRecipients {@code --warn-stale-recipients} (false: {@code --no-warn-stale-recipients})
     * @param recipientWindow {@code --recipient-liveness-window}, seconds
     * @param waiterWindow {@code --waiter-liveness-window}, seconds
     */
    record Liveness(boolean warnStaleRecipients, double recipientWindow, double waiterWindow) {
        /** The defaults, which are also how a node of an earlier version, reporting none of them, is read. */
        static final Liveness DEFAULT = new Liveness(true, HubConfig.DEFAULT_RECIPIENT_LIVENESS_WINDOW,
                HubConfig.DEFAULT_WAITER_LIVENESS_WINDOW);

        /** The flags {@code config} carries. */
        static Liveness of(HubConfig config) {
            return new Liveness(config.warnStaleRecipients(), config.recipientLivenessWindowSeconds(),
                    config.waiterLivenessWindowSeconds());
        }

        /**
         * Adds each setting whose canonical value is not the default's. A node of an earlier version
         * reports none of them, and the comparison reads a setting one side lacks as differing: written
         * always, they would set every upgraded node against every older one; left out at the default,
         * a cluster at the defaults keeps its fingerprint across the upgrade, and a node with another
         * value is reported against an older leader, which cannot show that it shares it.
         */
        void putInto(Map<String, String> s) {
            putUnlessDefault(s, "warn_stale_recipients", String.valueOf(warnStaleRecipients),
                    String.valueOf(DEFAULT.warnStaleRecipients));
            putUnlessDefault(s, "recipient_liveness_window", MeshGovernanceSettings.number(recipientWindow),
                    MeshGovernanceSettings.number(DEFAULT.recipientWindow));
            putUnlessDefault(s, "waiter_liveness_window", MeshGovernanceSettings.number(waiterWindow),
                    MeshGovernanceSettings.number(DEFAULT.waiterWindow));
        }

        private static void putUnlessDefault(Map<String, String> s, String name, String value, String byDefault) {
            if (!value.equals(byDefault)) {
                s.put(name, value);
            }
        }
    }

    /** This node's settings from its validated flags (with a peers file, its routes are not compared). */
    static MeshGovernanceSettings of(String hubId, FederationSettings federation, String defaultDelivery,
                                     boolean servingPolicy, Liveness liveness) {
        MeshGovernanceSettings s = of(hubId, federation.owners(), federation.watch(), federation.forward(),
                federation.relayRoutes(), federation.relay(), defaultDelivery, servingPolicy, liveness);
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
                                     boolean servingPolicy, Liveness liveness) {
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
        liveness.putInto(s);
        return MeshGovernanceSettings.of(s);
    }
}
