package dev.synapsehub.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.mesh.MeshSettingsProbe.NodeSettings;

import java.util.Map;

/** How {@code mesh status} shows each node's governance settings against the leader's (docs/mesh.md). */
final class SettingsColumn {
    private SettingsColumn() {
    }

    /**
     * E.g. {@code settings sha256:1a2b3c4d agree}, {@code settings sha256:5e6f7a8b MISMATCH with n1
     * (namespace_owner)}, or {@code settings ?} for a node that did not answer.
     */
    static String text(NodeSettings s) {
        if (s == null) {
            return "settings ?";
        }
        String head = "settings " + shortPrint(s.fingerprint()) + " ";
        if (s.mismatched()) {
            return head + "MISMATCH with " + s.leader() + " (" + String.join(", ", s.differing()) + ")";
        }
        return head + s.state();
    }

    /** {@code settings_mismatch}: true when any node reports one; {@code settings} by node (null: no answer). */
    static void put(ObjectNode o, Map<String, NodeSettings> all) {
        o.put("settings_mismatch", all.values().stream().anyMatch(s -> s != null && s.mismatched()));
        ObjectNode by = o.putObject("settings");
        all.forEach((id, s) -> {
            if (s == null) {
                by.putNull(id);
                return;
            }
            ObjectNode n = by.putObject(id);
            n.put("fingerprint", s.fingerprint());
            n.put("state", s.state());
            n.put("leader", s.leader());
            s.differing().forEach(n.putArray("differing")::add);
        });
    }

    private static String shortPrint(String fingerprint) {
        int cut = "sha256:".length() + 8;
        return fingerprint.length() > cut ? fingerprint.substring(0, cut) : fingerprint;
    }
}
