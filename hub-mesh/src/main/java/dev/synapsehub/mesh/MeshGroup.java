package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.JsonNode;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.GroupInfoReply;
import org.apache.ratis.protocol.GroupListReply;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.TimeDuration;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.Function;
import java.util.stream.Stream;

/**
 * A mesh's Raft group. Its id is derived from the founding voters' ids and kept through
 * membership changes ({@link MeshMembership}), so after one it can no longer be derived from
 * today's voters: a restarted node reads it from its Raft storage, a joining node is given it,
 * and the operator tools ask the voters for it.
 */
public final class MeshGroup {
    private static final System.Logger LOG = System.getLogger(MeshGroup.class.getName());

    private MeshGroup() {
    }

    /**
     * The group a node's Raft storage holds (the one directory Ratis named by its id), or null
     * when the storage holds none yet.
     *
     * @throws IOException when it holds more than one (a node belongs to one group) or cannot be listed
     */
    public static UUID inStorage(Path storageDir) throws IOException {
        if (!Files.isDirectory(storageDir)) {
            return null;
        }
        List<UUID> found = new ArrayList<>();
        try (Stream<Path> entries = Files.list(storageDir)) {
            for (Path p : entries.filter(Files::isDirectory).toList()) {
                UUID id = uuid(p.getFileName().toString());
                if (id != null) {
                    found.add(id);
                }
            }
        }
        if (found.size() > 1) {
            throw new IOException(storageDir + " holds more than one Raft group " + found
                    + "; a mesh node belongs to one: move the stale one aside");
        }
        return found.isEmpty() ? null : found.get(0);
    }

    private static UUID uuid(String name) {
        try {
            UUID id = UUID.fromString(name);
            return id.toString().equals(name) ? id : null;
        } catch (IllegalArgumentException e) {
            return null; // not a group directory
        }
    }

    /**
     * The group the voters at {@code peers} run: the first that answers names it (each asked
     * within {@code timeout}); derived from the peers' ids when none answers.
     */
    public static UUID discover(List<MeshPeer> peers, Duration timeout) {
        return discover(peers, timeout, null);
    }

    /** As above, over mutual TLS when {@code tls} is not null (a mesh started with it refuses anything else). */
    public static UUID discover(List<MeshPeer> peers, Duration timeout, MeshTls tls) {
        try (RaftClient client = client(RaftGroupId.valueOf(MeshConfig.groupId(peers)), peers, timeout, null, tls)) {
            for (MeshPeer p : peers) {
                List<UUID> groups = groupsOf(client, p.id());
                if (groups != null && groups.size() == 1) {
                    return groups.get(0);
                }
            }
        } catch (IOException e) {
            LOG.log(System.Logger.Level.DEBUG, "closing the group probe: " + e);
        }
        return MeshConfig.groupId(peers);
    }

    /** The groups the voter {@code id} runs, or null when it does not answer. */
    static List<UUID> groupsOf(RaftClient client, String id) {
        try {
            GroupListReply reply = client.getGroupManagementApi(RaftPeerId.valueOf(id)).list();
            if (reply == null || !reply.isSuccess()) {
                return null;
            }
            return reply.getGroupIds().stream().map(RaftGroupId::getUuid).toList();
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, "mesh voter " + id + " did not list its groups: " + e.getMessage());
            return null;
        }
    }

    /**
     * The voters of {@code group} as voter {@code id} holds them in its current configuration
     * (ids and Raft addresses), or null when it does not answer.
     */
    static List<MeshPeer> votersAsSeenBy(RaftClient client, RaftGroupId group, String id) {
        GroupInfoReply reply;
        try {
            reply = client.getGroupManagementApi(RaftPeerId.valueOf(id)).info(group);
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, "mesh voter " + id + " did not report its configuration: " + e.getMessage());
            return null;
        }
        if (reply == null || !reply.isSuccess() || reply.getGroup() == null) {
            return null;
        }
        // the group's peers are the voter's current configuration (the reply's conf field is not filled in)
        List<MeshPeer> voters = new ArrayList<>();
        for (RaftPeer p : reply.getGroup().getPeers()) {
            String address = p.getAddress();
            int colon = address.lastIndexOf(':');
            voters.add(new MeshPeer(p.getId().toString(), address.substring(0, colon),
                    Integer.parseInt(address.substring(colon + 1))));
        }
        return voters;
    }

    /**
     * A client of {@code group} at {@code peers} that does not retry, each request bounded by
     * {@code timeout}, sending to {@code leader} first (null: any), over mutual TLS when {@code tls}
     * is not null.
     */
    static RaftClient client(RaftGroupId group, List<MeshPeer> peers, Duration timeout, String leader, MeshTls tls) {
        List<RaftPeer> raftPeers = new ArrayList<>();
        for (MeshPeer p : peers) {
            raftPeers.add(RaftPeer.newBuilder().setId(p.id()).setAddress(p.address()).build());
        }
        RaftProperties properties = MeshTransport.properties();
        RaftClientConfigKeys.Rpc.setRequestTimeout(properties,
                TimeDuration.valueOf(timeout.toMillis(), TimeUnit.MILLISECONDS));
        RaftClient.Builder builder = RaftClient.newBuilder().setRaftGroup(RaftGroup.valueOf(group, raftPeers))
                .setProperties(properties).setParameters(MeshTls.parameters(tls))
                .setRetryPolicy(RetryPolicies.noRetry());
        if (leader != null) {
            builder.setLeaderId(RaftPeerId.valueOf(leader));
        }
        return builder.build();
    }

    /**
     * Asks each voter {@code question} as a stale read (each answers from its own state), over
     * mutual TLS when {@code tls} is not null: the operator probes' one path. The group is the one
     * the voters run (kept through membership changes); a voter that does not answer within
     * {@code timeout}, answers an error, or whose answer {@code read} cannot use maps to null.
     */
    static <T> Map<String, T> askEachVoter(List<MeshPeer> peers, Duration timeout, MeshTls tls, byte[] question,
                                           Function<JsonNode, T> read) {
        return askEachVoter(discover(peers, timeout, tls), peers, timeout, tls, question, read);
    }

    /** As above, in {@code group} when the caller has looked it up already. */
    static <T> Map<String, T> askEachVoter(UUID group, List<MeshPeer> peers, Duration timeout, MeshTls tls,
                                           byte[] question, Function<JsonNode, T> read) {
        return askEachVoter(group, peers, timeout, tls, question, read, (id, why) -> { });
    }

    /** As above, telling {@code failed} each voter whose ask failed and why (it maps to null). */
    static <T> Map<String, T> askEachVoter(UUID group, List<MeshPeer> peers, Duration timeout, MeshTls tls,
                                           byte[] question, Function<JsonNode, T> read,
                                           BiConsumer<String, String> failed) {
        Message message = Message.valueOf(ByteString.copyFrom(question));
        Map<String, T> out = new LinkedHashMap<>();
        try (RaftClient client = client(RaftGroupId.valueOf(group), peers, timeout, null, tls)) {
            for (MeshPeer p : peers) {
                out.put(p.id(), askVoter(client, message, p, read, failed));
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot close the probe client: " + e.getMessage(), e);
        }
        return out;
    }

    private static <T> T askVoter(RaftClient client, Message message, MeshPeer p,
                                  Function<JsonNode, T> read, BiConsumer<String, String> failed) {
        try {
            RaftClientReply reply = client.io().sendStaleRead(message, 0,
                    RaftPeerId.valueOf(p.id()));
            if (reply == null || !reply.isSuccess()) {
                failed.accept(p.id(), reply == null ? "no answer" : String.valueOf(reply.getException()));
                return null;
            }
            return read.apply(MeshJson.tree(reply.getMessage().getContent().toByteArray()));
        } catch (IOException | RuntimeException e) {
            // unreachable, or a node of a version without this query: MeshProbe reports why, the caller may log it
            failed.accept(p.id(), String.valueOf(e));
            return null;
        }
    }
}
