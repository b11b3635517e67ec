package dev.synapsehub.mcp;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;

import java.util.Map;

/** Building wire frames, and turning hub frames into plain values for the MCP side. */
final class Frames {
    /** Thread-safe once configured. */
    static final ObjectMapper MAPPER = new ObjectMapper();

    private Frames() {
    }

    /** A request frame from {@code sender}: {@code target: "System"}, the type, an empty payload, the send time. */
    static ObjectNode request(String sender, String type) {
        return HubClient.requestFrame(sender, type);
    }

    /** A JSON value as plain Java values (maps, lists, strings, numbers, booleans, null). */
    static Object plain(JsonNode node) {
        return MAPPER.convertValue(node, Object.class);
    }

    /** A JSON object as a plain map. */
    @SuppressWarnings("unchecked")
    static Map<String, Object> plainObject(JsonNode node) {
        return (Map<String, Object>) MAPPER.convertValue(node, Map.class);
    }

    /** Compact JSON text of a plain value. */
    static String json(Object value) {
        try {
            return MAPPER.writeValueAsString(value);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalArgumentException("not representable as JSON: " + e.getMessage(), e);
        }
    }

    /** The frame's type. */
    static String type(JsonNode frame) {
        return frame.path("type").asText("");
    }
}
