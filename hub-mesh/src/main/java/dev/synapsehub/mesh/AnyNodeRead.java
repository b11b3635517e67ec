package dev.synapsehub.mesh;

import org.apache.ratis.protocol.RaftClientRequest;

/**
 * The Raft request type of the mesh's own queries that a node answers whatever its role (a term
 * check, an ask of the leader, a settings check): a stale read, so Ratis never refuses one for
 * the node's role (a refusal for the role fails every request on the stream). Its minimum index
 * is -1, Ratis' "no index": Ratis 3.2.2 refuses a stale read whose minimum index is above the
 * node's commit index, and a node of a just-started mesh has none (-1) until the leader's first
 * heartbeat after its first commit, so a minimum of 0 had such a node refuse every query then.
 */
final class AnyNodeRead {
    /** The request type: a stale read that any running node of the group answers. */
    static final RaftClientRequest.Type TYPE = RaftClientRequest.staleReadRequestType(-1);

    private AnyNodeRead() {
    }
}
