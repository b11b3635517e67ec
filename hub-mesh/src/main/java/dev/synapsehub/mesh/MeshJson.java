package dev.synapsehub.mesh;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.synapsehub.core.command.ClaimCommand;

import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * The one JSON mapper of the mesh: unknown members are ignored (minor versions are additive,
 * seed 001 §3), non-finite numbers survive a round trip, non-ASCII is escaped.
 */
final class MeshJson {
    static final ObjectMapper MAPPER = new ObjectMapper(JsonFactory.builder()
            .enable(JsonWriteFeature.ESCAPE_NON_ASCII)
            .enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS)
            .build())
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .addMixIn(ClaimCommand.class, ClaimCommandWire.class);

    /**
     * A claim's {@code keepHeld} is written only when set: a claim without it (every claim but an
     * unkeyed forwarded one) replicates byte for byte as before the flag existed, and a node of an
     * older version reading one with it ignores the member and renews, as it always did.
     */
    private abstract static class ClaimCommandWire {
        @JsonInclude(JsonInclude.Include.NON_NULL)
        abstract Boolean keepHeld();
    }

    private MeshJson() {
    }

    static byte[] bytes(JsonNode node) {
        try {
            return MAPPER.writeValueAsBytes(node);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Parses {@code bytes}; a malformed record is an {@link IllegalArgumentException}. */
    static JsonNode tree(byte[] bytes) {
        try {
            JsonNode node = MAPPER.readTree(bytes);
            if (node == null || !node.isObject()) {
                throw new IllegalArgumentException("not a JSON object");
            }
            return node;
        } catch (IOException e) {
            throw new IllegalArgumentException("malformed JSON: " + e.getMessage(), e);
        }
    }
}
