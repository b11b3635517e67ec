package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos.RaftPeerProto;
import org.apache.ratis.protocol.RaftGroup;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The group a node's Raft server starts with. A node whose storage holds a Raft configuration
 * starts with it (Ratis reads it back). One whose storage holds none asks its peers first:
 * <ul>
 *   <li>none answers: a founder starts with its peers (a new mesh), any other node with no members;</li>
 *   <li>the running mesh's voters do not name it: no members (a new node, or one removed and added
 *       again, waits for {@code mesh add-node});</li>
 *   <li>they name it: a founder of a mesh that has committed nothing yet starts with its peers; a node
 *       whose storage is gone is refused ({@link MeshRejoinRefused}).</li>
 * </ul>
 * Ratis starts a server outside its own configuration as a follower that waits for a leader; one
 * inside it campaigns after an election timeout, and a leader answers a candidate outside its
 * configuration with a shutdown that closes the candidate's division for good, so add-node could
 * not commit once the new node had campaigned. A voter restarted with empty storage would be worse:
 * it lost its vote and the entries it acknowledged, and the leader keeps its old match index, so it
 * sends from there and never installs its snapshot.
 */
final class MeshStart {
    private static final System.Logger LOG = System.getLogger(MeshStart.class.getName());
    /** The query a node answers with whether its state holds committed records. */
    static final String QUERY = "history";
    private static final String APPLIED_INDEX = "applied_index";
    /** Rounds of the history question: a peer that has just started may not answer the first. */
    private static final int HISTORY_ROUNDS = 3;

    private MeshStart() {
    }

    /** The group {@code config}'s node starts its Raft server with; {@code group} holds all its peers. */
    static RaftGroup serverGroup(MeshConfig config, RaftGroup group) throws IOException {
        RaftGroup none = RaftGroup.valueOf(group.getGroupId()); // Ratis requires this node in any group with peers
        if (storedVoters(config.storageDir(), config.groupId()) != null) {
            return group; // Ratis starts from the configuration its storage holds, whatever it is given
        }
        boolean founding = config.groupId().equals(MeshConfig.groupId(config.peers()));
        List<MeshPeer> others = config.peers().stream().filter(p -> !p.id().equals(config.nodeId())).toList();
        Duration each = Duration.ofMillis(Math.min(2_000, config.commitTimeout().toMillis()));
        List<MeshProbe.PeerReport> reports = others.isEmpty() ? List.of()
                : MeshProbe.probe(config.groupId(), others, each, config.tls());
        List<MeshProbe.PeerReport> running = reports.stream().filter(r -> r.reachable() && !r.voters().isEmpty())
                .toList();
        if (running.isEmpty()) {
            return founding ? group : none; // a new mesh, or the mesh is down: nothing to tell otherwise
        }
        List<String> voters = MeshProbe.currentVoters(running, others);
        if (!voters.contains(config.nodeId())) {
            LOG.log(System.Logger.Level.INFO, "mesh node " + config.nodeId() + " is not a voter of the running mesh "
                    + voters + ": it waits for mesh add-node");
            return none;
        }
        if (MeshGroup.inStorage(config.storageDir()) != null) {
            return group; // it has run in this group (a founder before its mesh formed): Ratis replays its log
        }
        if (!founding) {
            throw new MeshRejoinRefused(config, voters, "was changed to count it as a voter");
        }
        String history = history(config, running, each);
        if (history != null) {
            throw new MeshRejoinRefused(config, voters, history);
        }
        return group; // the founders of a mesh that has committed nothing start together
    }

    /**
     * Why the running mesh is not new (it holds committed records, or a voter could not tell), or
     * null when every answering voter holds none.
     */
    private static String history(MeshConfig config, List<MeshProbe.PeerReport> running, Duration each) {
        List<MeshPeer> asked = new ArrayList<>();
        for (MeshProbe.PeerReport r : running) {
            if (r.lastSnapshotIndex() >= 0) {
                return "has committed records (" + r.id() + " holds a snapshot at index " + r.lastSnapshotIndex() + ")";
            }
            if (r.appliedIndex() > 0) { // index 0 is the first leader's configuration: no record before index 1
                config.peers().stream().filter(p -> p.id().equals(r.id())).forEach(asked::add);
            }
        }
        for (int round = 0; round < HISTORY_ROUNDS && !asked.isEmpty(); round++) {
            if (round > 0 && !pause()) {
                break;
            }
            Map<String, Long> answers = MeshGroup.askEachVoter(config.groupId(), asked, each, config.tls(),
                    MeshJson.bytes(question()), MeshStart::appliedIndex);
            for (Map.Entry<String, Long> a : answers.entrySet()) {
                if (a.getValue() != null && a.getValue() > 0) {
                    return "has committed records (" + a.getKey() + " applied one at log index " + a.getValue() + ")";
                }
            }
            asked.removeIf(p -> answers.get(p.id()) != null);
        }
        return asked.isEmpty() ? null : "was reached, but " + asked.stream().map(MeshPeer::id).toList()
                + " did not tell whether it holds committed records";
    }

    /** A pause between two rounds of the history question; false when interrupted (the start is being stopped). */
    private static boolean pause() {
        try {
            Thread.sleep(200);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private static ObjectNode question() {
        ObjectNode request = MeshJson.MAPPER.createObjectNode();
        request.put("protocol", MeshProtocol.PROTOCOL);
        request.put("version", MeshProtocol.VERSION);
        request.put(MeshQueueProbe.QUERY, QUERY);
        return request;
    }

    /** A node's answer to {@link #QUERY}: the log index of the last record its state holds (0: none). */
    static ObjectNode answer(long appliedIndex) {
        return MeshJson.MAPPER.createObjectNode().put(APPLIED_INDEX, appliedIndex);
    }

    private static Long appliedIndex(JsonNode answer) {
        return answer != null && answer.has(APPLIED_INDEX) ? answer.get(APPLIED_INDEX).asLong() : null;
    }

    /**
     * The voter ids of the Raft configuration {@code storageDir} holds for {@code group} (the one
     * Ratis last applied or installed, in {@code current/raft-meta.conf}), or null when it holds none.
     */
    static List<String> storedVoters(Path storageDir, UUID group) {
        Path conf = storageDir.resolve(group.toString()).resolve("current").resolve("raft-meta.conf");
        if (!Files.isRegularFile(conf)) {
            return null;
        }
        try (InputStream in = Files.newInputStream(conf)) {
            LogEntryProto entry = LogEntryProto.newBuilder().mergeFrom(in).build();
            if (!entry.hasConfigurationEntry()) {
                return null;
            }
            List<String> ids = new ArrayList<>();
            for (RaftPeerProto p : entry.getConfigurationEntry().getPeersList()) {
                ids.add(p.getId().toStringUtf8());
            }
            return ids;
        } catch (IOException | RuntimeException e) {
            // Ratis skips a configuration file it cannot read too, and starts from the group and its log
            LOG.log(System.Logger.Level.WARNING, "cannot read the Raft configuration " + conf + ": " + e);
            return null;
        }
    }
}
