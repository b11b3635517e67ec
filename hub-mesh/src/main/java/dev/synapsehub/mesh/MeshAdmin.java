package dev.synapsehub.mesh;

import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.util.TimeDuration;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Operator actions on a running mesh over Raft's admin channel (no agent connection): what
 * {@code synapse-hub mesh transfer-leader} does. Each action checks the cluster first, refuses
 * with a {@link MeshAdminException} when it cannot be done, and confirms its effect afterwards.
 */
public final class MeshAdmin {
    private MeshAdmin() {
    }

    /** Why an action was not done; nothing was changed unless the message says so. */
    public static final class MeshAdminException extends Exception {
        public MeshAdminException(String message) {
            super(message);
        }
    }

    /**
     * A leadership transfer's outcome.
     *
     * @param from the leader before (equal to {@code to} when the target already led)
     * @param to the leader after, confirmed by the node itself
     * @param term the term the new leader leads
     */
    public record Transfer(String from, String to, long term) {
        /** True when nothing had to move. */
        public boolean alreadyLeading() {
            return from.equals(to);
        }
    }

    /**
     * Makes {@code target} the leader of the mesh whose voters are {@code peers}: the current
     * leader (the one a majority names) hands over once the target has caught up, then the
     * target is asked until it reports leading, all within {@code timeout}.
     *
     * @throws IllegalArgumentException when {@code target} is not one of {@code peers}
     * @throws MeshAdminException when no leader is agreed, Ratis refused, or the target does not lead in time
     */
    public static Transfer transferLeader(List<MeshPeer> peers, String target, Duration timeout)
            throws MeshAdminException, InterruptedException {
        return transferLeader(peers, target, timeout, null);
    }

    /** As above, over mutual TLS when {@code tls} is not null. */
    public static Transfer transferLeader(List<MeshPeer> peers, String target, Duration timeout, MeshTls tls)
            throws MeshAdminException, InterruptedException {
        if (peers.stream().noneMatch(p -> p.id().equals(target))) {
            throw new IllegalArgumentException("'" + target + "' is not one of the mesh's voters "
                    + peers.stream().map(MeshPeer::id).toList());
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        List<MeshProbe.PeerReport> reports = MeshProbe.probe(peers, timeout, tls);
        String leader = agreedLeader(reports, MeshConfig.quorum(peers.size()));
        if (leader == null) {
            throw new MeshAdminException("no leader is agreed by a majority of the voters; nothing was changed");
        }
        if (!leader.equals(target)) {
            // Ratis 3.2.2 keeps a leader "stepping down" (refusing every write) for good when its hand-over fails
            // at once, as it does to a voter that does not answer: such a hand-over is not asked for
            MeshProbe.PeerReport to = reports.stream().filter(r -> r.id().equals(target)).findFirst().orElse(null);
            if (to == null || !to.reachable() || !"FOLLOWER".equals(to.role())) {
                throw new MeshAdminException(target + " cannot take the lead now ("
                        + (to == null ? "not probed" : to.reachable() ? "it is " + to.role() : "it does not answer: "
                        + to.error()) + "); nothing was changed, " + leader + " still leads");
            }
            RaftClientReply reply;
            try (RaftClient client = client(peers, timeout, tls)) {
                reply = client.admin().transferLeadership(RaftPeerId.valueOf(target), RaftPeerId.valueOf(leader),
                        timeout.toMillis());
            } catch (IOException | RuntimeException e) {
                throw new MeshAdminException("leader " + leader + " did not hand over to " + target + ": " + e.getMessage());
            }
            if (reply == null || !reply.isSuccess()) {
                throw new MeshAdminException("leader " + leader + " did not hand over to " + target + ": "
                        + (reply == null ? "no reply" : reply.getException()));
            }
        }
        MeshProbe.PeerReport confirmed = null;
        while (System.nanoTime() - deadline < 0) { // bounded by the caller's timeout
            // the whole membership is probed: the group id is derived from it
            confirmed = MeshProbe.probe(peers, Duration.ofMillis(Math.min(timeout.toMillis(), 2000)), tls).stream()
                    .filter(r -> r.id().equals(target)).findFirst()
                    .orElseThrow();
            if (confirmed.reachable() && "LEADER".equals(confirmed.role())) {
                return new Transfer(leader, target, confirmed.term());
            }
            Thread.sleep(50);
        }
        throw new MeshAdminException(target + " does not report leading within " + timeout + " (last seen: "
                + (confirmed == null ? "not asked" : confirmed.reachable() ? confirmed.role() : confirmed.error()) + ")");
    }

    /** The leader named by at least {@code quorum} voters, or null. */
    static String agreedLeader(List<MeshProbe.PeerReport> reports, int quorum) {
        Map<String, Integer> votes = new HashMap<>();
        for (MeshProbe.PeerReport r : reports) {
            if (r.reachable() && r.leaderId() != null && votes.merge(r.leaderId(), 1, Integer::sum) >= quorum) {
                return r.leaderId();
            }
        }
        return null;
    }

    private static RaftClient client(List<MeshPeer> peers, Duration timeout, MeshTls tls) {
        List<RaftPeer> raftPeers = new ArrayList<>();
        for (MeshPeer p : peers) {
            raftPeers.add(RaftPeer.newBuilder().setId(p.id()).setAddress(p.address()).build());
        }
        RaftProperties properties = MeshTransport.properties();
        RaftClientConfigKeys.Rpc.setRequestTimeout(properties,
                TimeDuration.valueOf(timeout.toMillis(), TimeUnit.MILLISECONDS));
        return RaftClient.newBuilder()
                .setRaftGroup(RaftGroup.valueOf(RaftGroupId.valueOf(MeshGroup.discover(peers, timeout, tls)), raftPeers))
                .setProperties(properties).setParameters(MeshTls.parameters(tls))
                .setRetryPolicy(RetryPolicies.noRetry()).build();
    }
}
