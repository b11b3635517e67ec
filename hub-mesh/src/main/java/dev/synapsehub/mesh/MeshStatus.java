package dev.synapsehub.mesh;

import java.util.Map;

/**
 * A mesh node's view of its cluster, measured when asked.
 *
 * @param role LEADER, FOLLOWER, CANDIDATE (Ratis' role), or STOPPED
 * @param leaderId the leader this node knows of, or null
 * @param term the current Raft term (the contract's lease epoch)
 * @param commitIndex the last log index this node knows committed
 * @param appliedIndex the last record this node's state holds
 * @param appliedSeq the last event seq this node's state holds
 * @param quorum votes a commit needs
 * @param peerMatchIndex on the leader: each follower's replicated index (its lag is commitIndex minus it)
 * @param rejectedRecords records rejected as fenced or malformed since start
 * @param forwarded mutations this node forwarded to a leader since start
 * @param unknownOutcomes forwarded mutations answered COMMIT_UNKNOWN since start
 * @param failure why this node stopped applying, or null
 */
public record MeshStatus(String nodeId, String role, String leaderId, long term, long commitIndex, long appliedIndex,
                         long appliedSeq, int quorum, Map<String, Long> peerMatchIndex, long rejectedRecords,
                         long forwarded, long unknownOutcomes, String failure) {
    public MeshStatus {
        peerMatchIndex = Map.copyOf(peerMatchIndex);
    }

    /** True when this node leads. */
    public boolean leading() {
        return "LEADER".equals(role);
    }
}
