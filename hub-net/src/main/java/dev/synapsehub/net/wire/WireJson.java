package dev.synapsehub.net.wire;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonPointer;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.DoubleNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;

/**
 * The wire's strict JSON decoder (contract §4.3 step 1): UTF-8 only, nesting at most the
 * configured depth, no NaN/Infinity, no number overflowing a double (integer literals included),
 * no over-long literals, no trailing data, and no string or member name holding a lone UTF-16
 * surrogate (from a {@code \ud800} escape): such a string cannot be written back as UTF-8, and
 * folding it to {@code ?} would make it another identifier. Float literals are kept exactly so
 * HMAC canonicalisation sees them.
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

    /** Parses one inbound frame; {@code null} means "malformed JSON" (or ill-formed Unicode). */
    public JsonNode parse(byte[] bytes) {
        return decode(bytes).node();
    }

    /** Parses text; {@code null} means "malformed JSON" (or ill-formed Unicode). */
    public JsonNode parse(String text) {
        return decode(text).node();
    }

    /**
     * A decoded inbound frame: the node, or why there is none.
     *
     * @param node the frame, null when refused
     * @param illFormedUnicode true when the refusal is a lone surrogate (else: malformed JSON)
     * @param field the top-level member holding it, or null
     */
    public record Decoded(JsonNode node, boolean illFormedUnicode, String field) {
        static final Decoded MALFORMED = new Decoded(null, false, null);
    }

    /** Decodes one inbound frame, telling a lone surrogate apart from malformed JSON. */
    public Decoded decode(byte[] bytes) {
        String text;
        try {
            text = StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            return Decoded.MALFORMED;
        }
        return decode(text);
    }

    private Decoded decode(String text) {
        JsonNode node;
        try {
            node = mapper.readTree(text);
        } catch (JsonProcessingException | RuntimeException e) {
            return Decoded.MALFORMED;
        }
        if (node == null || node.isMissingNode()) {
            return Decoded.MALFORMED;
        }
        Decoded problem = problem(node, null);
        if (problem != null) {
            return problem;
        }
        if (mayHoldNegativeZero(text)) {
            try {
                restoreNegativeZeros(text, node);
            } catch (IOException | RuntimeException e) {
                return Decoded.MALFORMED; // not reached: the same text just parsed
            }
        }
        return new Decoded(node, false, null);
    }

    /**
     * Whether {@code text} may hold a float literal {@code -0.…} or {@code -0e…}: a cheap
     * over-approximation (the same characters inside a string also count).
     */
    static boolean mayHoldNegativeZero(String text) {
        for (int i = text.indexOf("-0"); i >= 0 && i + 2 < text.length(); i = text.indexOf("-0", i + 2)) {
            char next = text.charAt(i + 2);
            if (next == '.' || next == 'e' || next == 'E') {
                return true;
            }
        }
        return false;
    }

    /**
     * Puts back the sign of each negative-zero float literal, which the exact decimal a float is
     * kept as cannot carry: Python reads {@code -0.0} as a float whose {@code repr} is {@code -0.0}
     * (contract §9), so a signature over a frame holding one covers {@code -0.0}. For a member
     * given twice, the last one counts, as in the tree.
     */
    private void restoreNegativeZeros(String text, JsonNode root) throws IOException {
        Map<JsonPointer, Boolean> lastIsNegativeZero = new HashMap<>();
        try (JsonParser p = mapper.getFactory().createParser(text)) {
            JsonToken t;
            while ((t = p.nextToken()) != null) {
                // only a zero float can be a negative zero, or undo one given earlier under the same
                // name; anything else a later member puts there fails the check on the tree below
                if (t == JsonToken.VALUE_NUMBER_FLOAT && p.getDecimalValue().signum() == 0) {
                    boolean negativeZero = p.getText().startsWith("-");
                    JsonPointer at = p.getParsingContext().pathAsPointer();
                    if (negativeZero || lastIsNegativeZero.containsKey(at)) {
                        lastIsNegativeZero.put(at, negativeZero);
                    }
                }
            }
        }
        lastIsNegativeZero.forEach((at, negativeZero) -> {
            if (!negativeZero || at.matches()) {
                return;
            }
            JsonNode parent = root.at(at.head());
            JsonNode value = root.at(at);
            // a later member of the same name may have put something else there
            if (!value.isNumber() || value.isIntegralNumber() || value.decimalValue().signum() != 0) {
                return;
            }
            if (parent instanceof ObjectNode object) {
                object.set(at.last().getMatchingProperty(), DoubleNode.valueOf(-0.0));
            } else if (parent instanceof ArrayNode array) {
                array.set(at.last().getMatchingIndex(), DoubleNode.valueOf(-0.0));
            }
        });
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

    /** The first thing wrong in {@code node} (a member of the top-level {@code field}), or null. */
    private static Decoded problem(JsonNode node, String field) {
        if (node.isFloatingPointNumber() || node.isBigInteger()) {
            // a 309-digit integer is as much an overflow as 1e400 (docs/protocol.md)
            return Double.isFinite(node.doubleValue()) ? null : Decoded.MALFORMED;
        }
        if (node.isTextual()) {
            return hasLoneSurrogate(node.textValue()) ? new Decoded(null, true, field) : null;
        }
        if (node.isObject()) {
            Iterator<Map.Entry<String, JsonNode>> it = node.fields();
            while (it.hasNext()) {
                Map.Entry<String, JsonNode> member = it.next();
                String where = field == null ? member.getKey() : field;
                if (hasLoneSurrogate(member.getKey())) {
                    return new Decoded(null, true, field);
                }
                Decoded inner = problem(member.getValue(), where);
                if (inner != null) {
                    return inner;
                }
            }
        } else if (node.isArray()) {
            for (JsonNode element : node) {
                Decoded inner = problem(element, field);
                if (inner != null) {
                    return inner;
                }
            }
        }
        return null;
    }

    /** True when {@code s} holds a high surrogate not followed by a low one, or a low one alone. */
    static boolean hasLoneSurrogate(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c)) {
                if (i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                    i++;
                } else {
                    return true;
                }
            } else if (Character.isLowSurrogate(c)) {
                return true;
            }
        }
        return false;
    }
}
