package dev.synapsehub.mesh;

import java.io.IOException;
import java.util.List;

/**
 * A voter on empty storage whose peers could not confirm that the mesh holds no committed record,
 * started without {@code --mesh-bootstrap}: to itself it looks the same as a voter that lost its
 * storage, so it does not found a mesh on its own say (docs/mesh.md, "Restoring a node from its peers").
 */
public final class MeshFoundingUnconfirmed extends IOException {
    MeshFoundingUnconfirmed(MeshConfig config, List<String> voters, int confirmed, int needed, String peers) {
        super("mesh node " + config.nodeId() + " holds no Raft configuration in " + config.storageDir() + ", and its"
                + " peers could not confirm that the mesh holds no committed record: " + confirmed + " of the voters "
                + voters + " did, " + needed + " must (" + peers + "). A voter that lost its storage must not start as"
                + " the voter it was: with a voter that lags it could elect a leader that lacks committed writes. If"
                + " this is the first start of a new mesh, start its nodes with --mesh-bootstrap (and drop the flag"
                + " once the mesh has formed). If this node lost its storage, or is being restored with --mesh-group,"
                + " start it again once a majority of its peers runs (docs/mesh.md, \"Restoring a node from its"
                + " peers\")");
    }
}
