package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.JsonNode;
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
 * Asks each voter for its governance settings fingerprint and how it compares with the leader's
 * (a stale read each node answers itself): what {@code synapse-hub mesh status} shows per node.
 */
public final class MeshSettingsProbe {
    private MeshSettingsProbe() {
    }

    /**
     * One node's answer.
     *
     * @param state {@code agree}, {@code mismatch} or {@code unknown} (not compared with a leader yet)
     * @param leader the leader it compared with, or null
     * @param differing the settings whose values differ from the leader's (empty unless mismatch)
     */
    public record NodeSettings(String fingerprint, String state, String leader, List<String> differing) {
        public NodeSettings {
            differing = List.copyOf(differing);
        }

        /** True when this node's settings differ from the leader's. */
        public boolean mismatched() {
            return "mismatch".equals(state);
        }
    }

    /** Each voter's settings, by id, in the order given; a voter that did not answer within {@code timeout} maps to null. */
    public static Map<String, NodeSettings> settings(List<MeshPeer> peers, Duration timeout, MeshTls tls) {
        List<RaftPeer> raftPeers = new ArrayList<>();
        for (MeshPeer p : peers) {
            raftPeers.add(RaftPeer.newBuilder().setId(p.id()).setAddress(p.address()).build());
        }
        RaftProperties properties = new RaftProperties();
        RaftClientConfigKeys.Rpc.setRequestTimeout(properties,
                TimeDuration.valueOf(timeout.toMillis(), TimeUnit.MILLISECONDS));
        Message message = Message.valueOf(ByteString.copyFrom(MeshJson.bytes(MeshSettingsCheck.query())));
        Map<String, NodeSettings> out = new LinkedHashMap<>();
        RaftGroupId groupId = RaftGroupId.valueOf(MeshGroup.discover(peers, timeout, tls));
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

    private static NodeSettings ask(RaftClient client, Message message, MeshPeer p) {
        try {
            RaftClientReply reply = client.io().sendStaleRead(message, 0, RaftPeerId.valueOf(p.id()));
            if (reply == null || !reply.isSuccess()) {
                return null;
            }
            return read(MeshJson.tree(reply.getMessage().getContent().toByteArray()));
        } catch (IOException | RuntimeException e) {
            return null; // unreachable, or a node without the check: MeshProbe reports why
        }
    }

    /** A node's answer, or null when it carries none (a node of an older version answers an error). */
    static NodeSettings read(JsonNode answer) {
        if (!answer.hasNonNull("fingerprint")) {
            return null;
        }
        List<String> differing = new ArrayList<>();
        answer.path("differing").forEach(d -> differing.add(d.asText()));
        return new NodeSettings(answer.get("fingerprint").asText(), answer.path("state").asText("unknown"),
                answer.path("leader").isTextual() ? answer.path("leader").asText() : null, differing);
    }
}
