package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

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
        return queueDepths(MeshGroup.discover(peers, timeout, tls), peers, timeout, tls);
    }

    /** As above, in {@code group} when the caller has looked it up already. */
    static Map<String, Integer> queueDepths(UUID group, List<MeshPeer> peers, Duration timeout, MeshTls tls) {
        ObjectNode request = MeshJson.MAPPER.createObjectNode();
        request.put("protocol", MeshProtocol.PROTOCOL);
        request.put("version", MeshProtocol.VERSION);
        request.put(QUERY, QUEUE_DEPTH);
        return MeshGroup.askEachVoter(group, peers, timeout, tls, MeshJson.bytes(request), MeshQueueProbe::depth);
    }

    /** Adds this node's queue depth to another probe's answer, so one read can carry both. */
    static ObjectNode withDepth(ObjectNode answer, int depth) {
        return answer.put(QUEUE_DEPTH, depth);
    }

    /** The queue depth an answer carries, or null when it carries none (a node of a version without it). */
    static Integer depth(JsonNode answer) {
        return answer != null && answer.has(QUEUE_DEPTH) ? answer.get(QUEUE_DEPTH).asInt() : null;
    }
}
