package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * What the operator cockpit shows of a mesh node, measured on this node when asked: the leader
 * it knows, the term, commit and applied index, its queue depth and newest snapshot, the §12
 * staleness label of its reads, and per voter the replication lag where this node knows it (the
 * leader knows every follower's; a follower knows its own).
 */
final class MeshCockpit {
    private MeshCockpit() {
    }

    /** {@code {kind: mesh, node_id, role, leader, term, ..., staleness, nodes: [...]}}. */
    static ObjectNode status(MeshNode node) {
        MeshStatus s = node.status();
        MeshNode.SnapshotStatus snap = node.snapshotStatus();
        ObjectNode o = MeshJson.MAPPER.createObjectNode();
        o.put("kind", "mesh");
        o.put("node_id", s.nodeId());
        o.put("role", s.role());
        if (s.leaderId() == null) {
            o.putNull("leader");
        } else {
            o.put("leader", s.leaderId());
        }
        o.put("term", s.term());
        o.put("commit_index", s.commitIndex());
        o.put("applied_index", node.lastAppliedLogIndex()); // Raft's own entries too, as the commit index counts them
        o.put("applied_seq", s.appliedSeq());
        o.put("quorum", s.quorum());
        o.put("queue_depth", node.queueDepth());
        o.put("last_snapshot_index", snap.lastSnapshotIndex());
        o.put("snapshots_taken", snap.taken());
        o.put("log_start_index", snap.logStartIndex());
        if (s.failure() == null) {
            o.putNull("failure");
        } else {
            o.put("failure", LogRedactor.scrub(s.failure()));
        }
        o.set("staleness", node.staleness().toJson());
        ArrayNode nodes = o.putArray("nodes");
        for (MeshPeer p : node.config().peers()) {
            ObjectNode n = nodes.addObject();
            n.put("id", p.id());
            n.put("address", p.address());
            n.put("self", p.id().equals(s.nodeId()));
            n.put("leader", p.id().equals(s.leaderId()));
            Long lag = lag(s, node.lastAppliedLogIndex(), p.id());
            if (lag == null) {
                n.putNull("lag_entries"); // only the leader measures another node's lag
            } else {
                n.put("lag_entries", lag);
            }
        }
        return o;
    }

    /**
     * Log entries {@code id} is behind the commit index, or null where this node cannot know
     * ({@code applied}: this node's last applied log index, Raft's own entries included).
     */
    private static Long lag(MeshStatus s, long applied, String id) {
        if (id.equals(s.nodeId())) {
            if (s.leading()) {
                return 0L;
            }
            // not a nested ternary: `cond ? null : long` unboxes the null and throws
            return applied < 0 ? null : Long.valueOf(Math.max(0, s.commitIndex() - applied));
        }
        Long match = s.leading() ? s.peerMatchIndex().get(id) : null;
        return match == null ? null : Math.max(0, s.commitIndex() - match);
    }
}
