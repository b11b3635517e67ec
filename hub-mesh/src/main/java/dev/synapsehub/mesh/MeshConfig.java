package dev.synapsehub.mesh;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;

/**
 * A mesh node's configuration, validated once.
 *
 * @param nodeId this node's id; must be one of {@code peers}
 * @param peers every voter, this node included, in the order given
 * @param storageDir where Ratis keeps its log (beside the journal: {@code <db>.raft})
 * @param commitTimeout how long a proposal or a forwarded mutation may wait for its commit
 * @param electionTimeoutMin Raft's election timeout range, low end (heartbeats go at half of it)
 * @param electionTimeoutMax Raft's election timeout range, high end
 * @param tls mutual TLS on the Raft transport (seed 001 §15), or null for plain gRPC
 * @param group the Raft group this node belongs to, or null for the one derived from {@code peers}
 *     (a mesh keeps its founding group through membership changes: {@link MeshGroup})
 * @param bootstrap whether a start on empty storage may found a new mesh when its peers cannot
 *     confirm that the mesh holds nothing ({@code --mesh-bootstrap}: the first start of a new mesh);
 *     without it such a start is refused, since a voter that lost its storage looks the same
 */
public record MeshConfig(String nodeId, List<MeshPeer> peers, Path storageDir, Duration commitTimeout,
                         Duration electionTimeoutMin, Duration electionTimeoutMax, MeshTls tls, UUID group,
                         boolean bootstrap) {
    /** Default commit timeout. */
    public static final Duration DEFAULT_COMMIT_TIMEOUT = Duration.ofSeconds(5);
    /** Default election timeout range: wide enough for a loaded two-core host. */
    public static final Duration DEFAULT_ELECTION_MIN = Duration.ofMillis(400);
    /** See {@link #DEFAULT_ELECTION_MIN}. */
    public static final Duration DEFAULT_ELECTION_MAX = Duration.ofMillis(800);

    public MeshConfig {
        peers = List.copyOf(peers);
        Set<String> ids = new HashSet<>();
        for (MeshPeer p : peers) {
            if (!ids.add(p.id())) {
                throw new IllegalArgumentException("mesh peer id '" + p.id() + "' is listed twice");
            }
        }
        if (nodeId == null || !ids.contains(nodeId)) {
            throw new IllegalArgumentException("--mesh-id '" + nodeId + "' is not one of --mesh-peers " + ids);
        }
        if (storageDir == null) {
            throw new IllegalArgumentException("a mesh node needs a storage directory (it goes beside --db)");
        }
        if (commitTimeout.isNegative() || commitTimeout.isZero()) {
            throw new IllegalArgumentException("the mesh commit timeout must be positive");
        }
        if (electionTimeoutMin.toMillis() < 50 || electionTimeoutMax.compareTo(electionTimeoutMin) <= 0) {
            throw new IllegalArgumentException("election timeouts must satisfy 50 ms <= min < max");
        }
    }

    /**
     * Without transport TLS, in the group derived from {@code peers} (a mesh whose membership never
     * changed), not bootstrapping.
     */
    public MeshConfig(String nodeId, List<MeshPeer> peers, Path storageDir, Duration commitTimeout,
                      Duration electionTimeoutMin, Duration electionTimeoutMax) {
        this(nodeId, peers, storageDir, commitTimeout, electionTimeoutMin, electionTimeoutMax, null, null, false);
    }

    /** Without transport TLS, in {@code group} (null: the one derived from {@code peers}), not bootstrapping. */
    public MeshConfig(String nodeId, List<MeshPeer> peers, Path storageDir, Duration commitTimeout,
                      Duration electionTimeoutMin, Duration electionTimeoutMax, UUID group) {
        this(nodeId, peers, storageDir, commitTimeout, electionTimeoutMin, electionTimeoutMax, null, group, false);
    }

    /** This configuration with {@code tls} on the Raft transport (null: plain gRPC). */
    public MeshConfig withTls(MeshTls tls) {
        return new MeshConfig(nodeId, peers, storageDir, commitTimeout, electionTimeoutMin, electionTimeoutMax, tls,
                group, bootstrap);
    }

    /** This configuration with {@code bootstrap} (see the record's parameter). */
    public MeshConfig withBootstrap(boolean bootstrap) {
        return new MeshConfig(nodeId, peers, storageDir, commitTimeout, electionTimeoutMin, electionTimeoutMax, tls,
                group, bootstrap);
    }

    /** With the default timeouts. */
    public static MeshConfig of(String nodeId, List<MeshPeer> peers, Path storageDir) {
        return new MeshConfig(nodeId, peers, storageDir, DEFAULT_COMMIT_TIMEOUT, DEFAULT_ELECTION_MIN,
                DEFAULT_ELECTION_MAX);
    }

    /** This node's own entry. */
    public MeshPeer self() {
        return peers.stream().filter(p -> p.id().equals(nodeId)).findFirst().orElseThrow();
    }

    /** Votes a commit needs: floor(voters / 2) + 1 (seed 001 §7). */
    public int quorum() {
        return quorum(peers.size());
    }

    /** Votes a commit needs among {@code voters}: floor(voters / 2) + 1. */
    public static int quorum(int voters) {
        return voters / 2 + 1;
    }

    /**
     * The Raft group id, the same on every node given the same membership: derived from the
     * sorted peer ids, so no extra setting has to match; after a membership change, the
     * founding group this configuration names.
     */
    public UUID groupId() {
        return group != null ? group : groupId(peers);
    }

    /** The Raft group id of a membership: see {@link #groupId()}. */
    public static UUID groupId(List<MeshPeer> peers) {
        List<String> ids = new ArrayList<>();
        peers.forEach(p -> ids.add(p.id()));
        ids.sort(null);
        return UUID.nameUUIDFromBytes(("synapse-mesh:" + String.join(",", ids)).getBytes(StandardCharsets.UTF_8));
    }

    /** The hub id the whole mesh shows the outside when none is configured: one per group. */
    public String defaultHubId() {
        return "syn-" + groupId().toString().substring(0, 8);
    }
}
