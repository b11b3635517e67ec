package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.time.Duration;
import java.util.List;
import java.util.Map;

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
        ObjectNode request = MeshJson.MAPPER.createObjectNode();
        request.put("protocol", MeshProtocol.PROTOCOL);
        request.put("version", MeshProtocol.VERSION);
        request.put(QUERY, QUEUE_DEPTH);
        return MeshGroup.askEachVoter(peers, timeout, tls, MeshJson.bytes(request),
                answer -> answer.has(QUEUE_DEPTH) ? answer.get(QUEUE_DEPTH).asInt() : null);
    }
}
