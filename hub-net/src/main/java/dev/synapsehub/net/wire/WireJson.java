package dev.synapsehub.net.wire;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;

/**
 * The wire's strict JSON decoder (contract §4.3 step 1): UTF-8 only, nesting at most the
 * configured depth, no NaN/Infinity, no number overflowing a double, no over-long literals,
 * no trailing data. Float literals are kept exactly so HMAC canonicalisation sees them.
 */
public final class WireJson {
    /** Longest number literal accepted (Jackson counts digits). */
    public static final int MAX_NUMBER_LENGTH = 1000;

    private final ObjectMapper mapper;

    /** A decoder refusing nesting deeper than {@code maxDepth}. */
    public WireJson(int maxDepth) {
        JsonFactory factory = JsonFactory.builder()
                .streamReadConstraints(StreamReadConstraints.builder()
                        .maxNestingDepth(maxDepth)
                        .maxNumberLength(MAX_NUMBER_LENGTH)
                        .build())
                .build();
        this.mapper = new ObjectMapper(factory)
                .setNodeFactory(JsonNodeFactory.withExactBigDecimals(true))
                .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
                .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
    }

    /** The mapper, for writing frames. */
    public ObjectMapper mapper() {
        return mapper;
    }

    /** Parses one inbound frame; {@code null} means "malformed JSON". */
    public JsonNode parse(byte[] bytes) {
        String text;
        try {
            text = StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            return null;
        }
        return parse(text);
    }

    /** Parses text; {@code null} means "malformed JSON". */
    public JsonNode parse(String text) {
        JsonNode node;
        try {
            node = mapper.readTree(text);
        } catch (JsonProcessingException | RuntimeException e) {
            return null;
        }
        if (node == null || node.isMissingNode() || !allFinite(node)) {
            return null;
        }
        return node;
    }

    /** Serialises a frame. */
    public String write(JsonNode node) {
        try {
            return mapper.writeValueAsString(node);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot serialise a frame", e);
        }
    }

    /** A fresh object node. */
    public ObjectNode object() {
        return mapper.createObjectNode();
    }

    private static boolean allFinite(JsonNode node) {
        if (node.isFloatingPointNumber()) {
            return Double.isFinite(node.doubleValue());
        }
        if (node.isContainerNode()) {
            Iterator<JsonNode> it = node.elements();
            while (it.hasNext()) {
                if (!allFinite(it.next())) {
                    return false;
                }
            }
        }
        return true;
    }
}
