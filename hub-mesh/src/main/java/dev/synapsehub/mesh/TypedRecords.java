package dev.synapsehub.mesh;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * JSON for the core's command and reply records: {@code {"type": SimpleName, "value": {...}}},
 * restricted to a fixed list of classes so a record can never name an arbitrary class.
 */
final class TypedRecords<T> {
    private final Class<T> base;
    private final Map<String, Class<? extends T>> byName = new HashMap<>();

    @SafeVarargs
    TypedRecords(Class<T> base, Class<? extends T>... permitted) {
        this.base = base;
        for (Class<? extends T> c : List.of(permitted)) {
            if (byName.put(c.getSimpleName(), c) != null) {
                throw new IllegalArgumentException("two permitted types named " + c.getSimpleName());
            }
        }
    }

    /** True when {@code value}'s class is one this codec writes. */
    boolean writes(T value) {
        return byName.get(value.getClass().getSimpleName()) == value.getClass();
    }

    ObjectNode write(T value) {
        if (!writes(value)) {
            throw new IllegalArgumentException("cannot replicate a " + value.getClass().getName());
        }
        ObjectNode o = MeshJson.MAPPER.createObjectNode();
        o.put("type", value.getClass().getSimpleName());
        o.set("value", MeshJson.MAPPER.valueToTree(value));
        return o;
    }

    T read(JsonNode node) {
        String type = node == null ? null : node.path("type").asText(null);
        Class<? extends T> c = type == null ? null : byName.get(type);
        if (c == null) {
            throw new IllegalArgumentException("unknown " + base.getSimpleName() + " type '" + type + "'");
        }
        try {
            return MeshJson.MAPPER.treeToValue(node.get("value"), c);
        } catch (JsonProcessingException | RuntimeException e) {
            throw new IllegalArgumentException("malformed " + type + ": " + e.getMessage(), e);
        }
    }
}
