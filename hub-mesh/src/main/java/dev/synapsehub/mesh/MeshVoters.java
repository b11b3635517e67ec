package dev.synapsehub.mesh;

import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.server.RaftConfiguration;

import java.util.Collection;
import java.util.List;

/**
 * The voters of a node's current Raft configuration, as its Raft server holds it now: what
 * {@code mesh add-node} / {@code remove-node} changed, not the peers the node was started with.
 * While a change is under way (joint consensus) the previous voters are listed too, and a commit
 * needs a majority of each; {@link #quorum()} is the current (new) configuration's.
 *
 * @param current the voters' ids of the current configuration
 * @param previous the voters' ids of the configuration being left, empty when none is
 */
public record MeshVoters(List<String> current, List<String> previous) {
    public MeshVoters {
        current = List.copyOf(current);
        previous = List.copyOf(previous);
    }

    /** The voters of {@code conf}. */
    static MeshVoters of(RaftConfiguration conf) {
        return new MeshVoters(ids(conf.getCurrentPeers()), ids(conf.getPreviousPeers()));
    }

    private static List<String> ids(Collection<RaftPeer> peers) {
        return peers.stream().map(p -> p.getId().toString()).sorted().toList();
    }

    /** How many voters the current configuration has. */
    public int count() {
        return current.size();
    }

    /** Votes a commit needs in the current configuration: floor(voters / 2) + 1. */
    public int quorum() {
        return MeshConfig.quorum(current.size());
    }

    /** True while a membership change is being committed (old and new voters both count). */
    public boolean changing() {
        return !previous.isEmpty();
    }
}
