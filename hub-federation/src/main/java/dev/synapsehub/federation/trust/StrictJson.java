package dev.synapsehub.federation.trust;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Strict JSON for trust files: one object, no repeated member at any depth (the repeated name
 * is reported), nothing after it. Also the field checks the trust files share.
 */
final class StrictJson {
    private static final JsonFactory FACTORY = new JsonFactory();

    private StrictJson() {
    }

    /** A repeated member, by name. */
    static final class RepeatedField extends Exception {
        final String field;

        RepeatedField(String field) {
            super(field);
            this.field = field;
        }
    }

    /**
     * Why {@link #object} refused a file, as an operator reads it: "is not valid JSON (at line L,
     * column C: what)" for a syntax error, without the parser's source description; else "is not
     * a JSON object (why)".
     */
    static String notAnObject(IOException e) {
        if (e instanceof JsonProcessingException syntax) {
            String what = syntax.getOriginalMessage()
                    .replaceAll("\\[Source: [^\\]]*?; (line: \\d+, column: \\d+)\\]", "$1");
            JsonLocation at = syntax.getLocation();
            return "is not valid JSON ("
                    + (at == null ? "" : "at line " + at.getLineNr() + ", column " + at.getColumnNr() + ": ") + what + ")";
        }
        return "not a JSON object".equals(e.getMessage()) ? "is not a JSON object"
                : "is not a JSON object (" + e.getMessage() + ")";
    }

    /** Parses {@code bytes} as one JSON object. */
    static ObjectNode object(byte[] bytes) throws IOException, RepeatedField {
        try (JsonParser p = FACTORY.createParser(bytes)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new IOException("not a JSON object");
            }
            ObjectNode root = readObject(p);
            if (p.nextToken() != null) {
                throw new IOException("data after the JSON object");
            }
            return root;
        }
    }

    private static ObjectNode readObject(JsonParser p) throws IOException, RepeatedField {
        ObjectNode o = JsonNodeFactory.instance.objectNode();
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            p.nextToken();
            JsonNode value = readValue(p);
            if (o.has(name)) {
                throw new RepeatedField(name);
            }
            o.set(name, value);
        }
        return o;
    }

    private static JsonNode readValue(JsonParser p) throws IOException, RepeatedField {
        switch (p.currentToken()) {
            case START_OBJECT:
                return readObject(p);
            case START_ARRAY: {
                ArrayNode a = JsonNodeFactory.instance.arrayNode();
                while (p.nextToken() != JsonToken.END_ARRAY) {
                    a.add(readValue(p));
                }
                return a;
            }
            case VALUE_STRING:
                return JsonNodeFactory.instance.textNode(p.getText());
            case VALUE_NUMBER_INT:
                return JsonNodeFactory.instance.numberNode(p.getLongValue());
            case VALUE_NUMBER_FLOAT:
                return JsonNodeFactory.instance.numberNode(p.getDoubleValue());
            case VALUE_TRUE:
                return JsonNodeFactory.instance.booleanNode(true);
            case VALUE_FALSE:
                return JsonNodeFactory.instance.booleanNode(false);
            case VALUE_NULL:
                return JsonNodeFactory.instance.nullNode();
            default:
                throw new IOException("unexpected " + p.currentToken());
        }
    }

    /** Members of {@code o} not in {@code allowed}, sorted. */
    static Set<String> unknown(ObjectNode o, Set<String> allowed) {
        Set<String> out = new TreeSet<>();
        o.fieldNames().forEachRemaining(n -> {
            if (!allowed.contains(n)) {
                out.add(n);
            }
        });
        return out;
    }

    /** Members of {@code required} missing from {@code o}, sorted. */
    static Set<String> missing(ObjectNode o, Set<String> required) {
        Set<String> out = new TreeSet<>();
        for (String r : required) {
            if (!o.has(r)) {
                out.add(r);
            }
        }
        return out;
    }

    /** A trimmed non-empty string member, or null when absent, not a string, or blank. */
    static String text(JsonNode o, String field) {
        JsonNode v = o.get(field);
        if (v == null || !v.isTextual() || v.textValue().isBlank()) {
            return null;
        }
        return v.textValue().strip();
    }

    /** A list of strings, trimmed, blanks dropped; null when the member is not an array of strings. */
    static List<String> strings(JsonNode o, String field) {
        JsonNode v = o.get(field);
        if (v == null || v.isNull()) {
            return List.of();
        }
        if (!v.isArray()) {
            return null;
        }
        List<String> out = new ArrayList<>();
        for (JsonNode s : v) {
            if (!s.isTextual()) {
                return null;
            }
            if (!s.textValue().isBlank()) {
                out.add(s.textValue().strip());
            }
        }
        return out;
    }
}
