package dev.synapsehub.mesh;

import java.io.IOException;
import java.util.List;

/**
 * A node with empty Raft storage that the running mesh still counts as a voter: it must be removed
 * and added again, not started as the voter it was (docs/mesh.md, "Restoring a node from its peers").
 */
public final class MeshRejoinRefused extends IOException {
    MeshRejoinRefused(MeshConfig config, List<String> voters, String why) {
        super(message(config, voters, why));
    }

    private static String message(MeshConfig config, List<String> voters, String why) {
        String self = config.nodeId();
        return "mesh node " + self + " has no Raft state in " + config.storageDir() + ", but the running mesh "
                + "(voters " + voters + ") " + why + ". A voter that lost its log and its vote must not rejoin as one:"
                + " with one lagging voter it could elect a leader that lacks committed writes, and the leader keeps"
                + " sending it from where it last was (it never catches up). Rejoin it as a new node: `synapse-hub"
                + " mesh remove-node --mesh-peers " + peers(config, voters) + " --node " + self + "`, start it"
                + " again on this empty storage with --mesh-group " + config.groupId() + ", then `synapse-hub mesh"
                + " add-node --mesh-peers " + peers(config, voters.stream().filter(v -> !v.equals(self)).toList())
                + " --node " + self + "=" + config.self().address() + "` (docs/mesh.md, \"Restoring a node from its"
                + " peers\")";
    }

    /** {@code ids} as --mesh-peers, when this node's list gives each an address. */
    private static String peers(MeshConfig config, List<String> ids) {
        List<String> listed = config.peers().stream().filter(p -> ids.contains(p.id()))
                .map(p -> p.id() + "=" + p.address()).toList();
        return listed.size() == ids.size() ? String.join(",", listed) : "<the voters>";
    }
}
