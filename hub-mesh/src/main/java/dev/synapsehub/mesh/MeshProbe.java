package dev.synapsehub.mesh;

import org.apache.ratis.client.RaftClient;
import org.apache.ratis.proto.RaftProtos.LogInfoProto;
import org.apache.ratis.proto.RaftProtos.RoleInfoProto;
import org.apache.ratis.protocol.GroupInfoReply;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * Asks every voter of a mesh for its own view over Raft's admin channel (no agent connection):
 * role, leader, term, commit and applied index, log end, last snapshot. What
 * {@code synapse-hub mesh status} prints; every figure is measured by the node that reports it.
 */
public final class MeshProbe {
    private MeshProbe() {
    }

    /**
     * One voter's answer.
     *
     * @param error why it could not be asked (unreachable, not a member), else null
     * @param leaderId the leader it follows (itself when it leads), or null
     * @param term the term of its last log entry (the leader's current term when it leads)
     * @param lastSnapshotIndex -1 when it has taken no snapshot
     * @param voters the voter ids of the Raft configuration it holds now (sorted), empty when unreachable
     */
    public record PeerReport(String id, String address, String error, String role, String leaderId, long term,
                             long commitIndex, long appliedIndex, long lastIndex, long lastSnapshotIndex,
                             boolean storageHealthy, List<String> voters) {
        public PeerReport {
            voters = voters == null ? List.of() : List.copyOf(voters);
        }

        /** True when the voter answered. */
        public boolean reachable() {
            return error == null;
        }
    }

    /** Asks each of {@code peers} (the group {@code --mesh-peers} names), each within {@code timeout}. */
    public static List<PeerReport> probe(List<MeshPeer> peers, Duration timeout) {
        return probe(peers, timeout, null);
    }

    /** As above, over mutual TLS when {@code tls} is not null (a mesh started with it refuses anything else). */
    public static List<PeerReport> probe(List<MeshPeer> peers, Duration timeout, MeshTls tls) {
        return probe(MeshGroup.discover(peers, timeout, tls), peers, timeout, tls); // kept through membership changes
    }

    /** As above, in {@code group} (from {@link MeshGroup#discover}) when the caller has looked it up already. */
    public static List<PeerReport> probe(UUID group, List<MeshPeer> peers, Duration timeout, MeshTls tls) {
        RaftGroupId groupId = RaftGroupId.valueOf(group);
        List<PeerReport> out = new ArrayList<>();
        try (RaftClient client = MeshGroup.client(groupId, peers, timeout, null, tls)) {
            for (MeshPeer p : peers) {
                out.add(ask(client, groupId, p));
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot close the probe client: " + e.getMessage(), e);
        }
        return out;
    }

    private static PeerReport ask(RaftClient client, RaftGroupId groupId, MeshPeer p) {
        GroupInfoReply reply;
        try {
            reply = client.getGroupManagementApi(RaftPeerId.valueOf(p.id())).info(groupId);
        } catch (IOException | RuntimeException e) {
            return new PeerReport(p.id(), p.address(), String.valueOf(e.getMessage()), null, null, -1, -1, -1, -1, -1,
                    false, List.of());
        }
        if (reply == null || !reply.isSuccess()) {
            return new PeerReport(p.id(), p.address(), reply == null ? "no answer" : String.valueOf(reply.getException()),
                    null, null, -1, -1, -1, -1, -1, false, List.of());
        }
        RoleInfoProto role = reply.getRoleInfoProto();
        String self = role.hasSelf() ? role.getSelf().getId().toStringUtf8() : "";
        if (!self.equals(p.id())) {
            // Ratis answers a group query whatever server id it was addressed to: two entries of --mesh-peers
            // reaching one process would otherwise count as two voters
            return new PeerReport(p.id(), p.address(), "the node at " + p.address() + " answered as '" + self
                    + "', not " + p.id(), null, null, -1, -1, -1, -1, -1, false, List.of());
        }
        LogInfoProto log = reply.getLogInfoProto();
        String leader = null;
        long term = log.hasLastEntry() ? log.getLastEntry().getTerm() : 0;
        if (role.hasLeaderInfo()) {
            leader = p.id();
            term = role.getLeaderInfo().getTerm();
        } else if (role.hasFollowerInfo() && role.getFollowerInfo().hasLeaderInfo()) {
            leader = role.getFollowerInfo().getLeaderInfo().getId().getId().toStringUtf8();
        }
        return new PeerReport(p.id(), p.address(), null, role.getRole().name(), leader == null || leader.isEmpty()
                ? null : leader, term, log.hasCommitted() ? log.getCommitted().getIndex() : -1,
                log.hasApplied() ? log.getApplied().getIndex() : -1, log.hasLastEntry() ? log.getLastEntry().getIndex() : -1,
                log.hasLastSnapshot() ? log.getLastSnapshot().getIndex() : -1, reply.isRaftStorageHealthy(),
                voters(reply));
    }

    /** The voters of the configuration the node holds (its group's peers; the reply's conf field is not filled in). */
    private static List<String> voters(GroupInfoReply reply) {
        if (reply.getGroup() == null) {
            return List.of();
        }
        return reply.getGroup().getPeers().stream().map(peer -> peer.getId().toString()).sorted().toList();
    }

    /**
     * The mesh's voters as the voters themselves report them: the list most of the answering
     * voters hold (ties: the leader's, else the first), or the ids {@code asked} when none
     * answered. What the quorum is computed from, so a stale {@code --mesh-peers} does not skew it.
     */
    public static List<String> currentVoters(List<PeerReport> reports, List<MeshPeer> asked) {
        java.util.Map<List<String>, Integer> seen = new java.util.LinkedHashMap<>();
        for (PeerReport r : reports) {
            if (r.reachable() && !r.voters().isEmpty()) {
                // the leader's view counts double: it is the one that commits the configuration
                seen.merge(r.voters(), r.id().equals(r.leaderId()) ? 2 : 1, Integer::sum);
            }
        }
        return seen.entrySet().stream().max(java.util.Map.Entry.comparingByValue()).map(java.util.Map.Entry::getKey)
                .orElseGet(() -> asked.stream().map(MeshPeer::id).sorted().toList());
    }
}
