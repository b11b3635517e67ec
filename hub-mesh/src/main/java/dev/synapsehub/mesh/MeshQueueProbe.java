package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.RaftProperties;
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
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Asks each voter how many strong writes it holds queued (seed 001 §9), with a stale read
 * answered by that node itself: a node cut off from its leader still answers, and that is
 * the node whose queue matters. What {@code synapse-hub mesh status} shows as the queue depth.
 */
public final class MeshQueueProbe {
    /** The member naming a probe request (a forwarded mutation has none). */
    static final String QUERY = "query";
    private static final String QUEUE_DEPTH = "queue_depth";

    private MeshQueueProbe() {
    }

    /** The answer of a node holding {@code depth} queued intents. */
    static ObjectNode answer(JsonNode request, int depth) {
        ObjectNode o = MeshJson.MAPPER.createObjectNode();
        if (QUEUE_DEPTH.equals(request.path(QUERY).asText())) {
            o.put(QUEUE_DEPTH, depth);
        } else {
            o.put("error", "unknown query '" + request.path(QUERY).asText() + "'");
        }
        return o;
    }

    /**
     * Each voter's queue depth, by id, in the order given; a voter that did not answer within
     * {@code timeout} maps to null.
     */
    public static Map<String, Integer> queueDepths(List<MeshPeer> peers, Duration timeout) {
        return queueDepths(peers, timeout, null);
    }

    /** As above, over mutual TLS when {@code tls} is not null (a mesh started with it refuses anything else). */
    public static Map<String, Integer> queueDepths(List<MeshPeer> peers, Duration timeout, MeshTls tls) {
        List<RaftPeer> raftPeers = new ArrayList<>();
        for (MeshPeer p : peers) {
            raftPeers.add(RaftPeer.newBuilder().setId(p.id()).setAddress(p.address()).build());
        }
        RaftProperties properties = new RaftProperties();
        RaftClientConfigKeys.Rpc.setRequestTimeout(properties,
                TimeDuration.valueOf(timeout.toMillis(), TimeUnit.MILLISECONDS));
        ObjectNode request = MeshJson.MAPPER.createObjectNode();
        request.put("protocol", MeshProtocol.PROTOCOL);
        request.put("version", MeshProtocol.VERSION);
        request.put(QUERY, QUEUE_DEPTH);
        Message message = Message.valueOf(ByteString.copyFrom(MeshJson.bytes(request)));
        Map<String, Integer> out = new LinkedHashMap<>();
        RaftGroupId groupId = RaftGroupId.valueOf(MeshGroup.discover(peers, timeout)); // kept through membership changes
        try (RaftClient client = RaftClient.newBuilder().setRaftGroup(RaftGroup.valueOf(groupId, raftPeers))
                .setProperties(properties).setParameters(MeshTls.parameters(tls))
                .setRetryPolicy(RetryPolicies.noRetry()).build()) {
            for (MeshPeer p : peers) {
                out.put(p.id(), ask(client, message, p));
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot close the probe client: " + e.getMessage(), e);
        }
        return out;
    }

    private static Integer ask(RaftClient client, Message message, MeshPeer p) {
        try {
            RaftClientReply reply = client.io().sendStaleRead(message, 0, RaftPeerId.valueOf(p.id()));
            if (reply == null || !reply.isSuccess()) {
                return null;
            }
            JsonNode answer = MeshJson.tree(reply.getMessage().getContent().toByteArray());
            return answer.has(QUEUE_DEPTH) ? answer.get(QUEUE_DEPTH).asInt() : null;
        } catch (IOException | RuntimeException e) {
            return null; // unreachable: MeshProbe reports why
        }
    }
}
