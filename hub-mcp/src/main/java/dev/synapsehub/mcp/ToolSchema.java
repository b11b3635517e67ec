package dev.synapsehub.mcp;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A tool's input: the JSON Schema an MCP client shows the model, and the check of the arguments
 * it sends against that same description (one definition, so the two cannot drift).
 */
final class ToolSchema {
    /** The JSON types a field may have. */
    enum Type { STRING, STRINGS, INTEGER, NUMBER, BOOLEAN }

    /** One property. {@code values} restricts a string to an enumeration (empty: any string). */
    record Field(String name, Type type, String description, boolean required, List<String> values, Double minimum,
            Double maximum) {
    }

    private final Map<String, Field> fields = new LinkedHashMap<>();

    private ToolSchema add(Field field) {
        if (fields.put(field.name(), field) != null) {
            throw new IllegalArgumentException("duplicate field " + field.name());
        }
        return this;
    }

    /** A string. */
    ToolSchema string(String name, boolean required, String description) {
        return add(new Field(name, Type.STRING, description, required, List.of(), null, null));
    }

    /** A string from a fixed set. */
    ToolSchema oneOf(String name, boolean required, List<String> values, String description) {
        return add(new Field(name, Type.STRING, description, required, List.copyOf(values), null, null));
    }

    /** An array of strings. */
    ToolSchema strings(String name, boolean required, String description) {
        return add(new Field(name, Type.STRINGS, description, required, List.of(), null, null));
    }

    /** An integer within [min, max] (either may be null). */
    ToolSchema integer(String name, boolean required, Long min, Long max, String description) {
        return add(new Field(name, Type.INTEGER, description, required, List.of(), min == null ? null : min.doubleValue(),
                max == null ? null : max.doubleValue()));
    }

    /** A number within [min, max] (either may be null). */
    ToolSchema number(String name, boolean required, Double min, Double max, String description) {
        return add(new Field(name, Type.NUMBER, description, required, List.of(), min, max));
    }

    /** A boolean. */
    ToolSchema bool(String name, boolean required, String description) {
        return add(new Field(name, Type.BOOLEAN, description, required, List.of(), null, null));
    }

    /** The fields in declaration order. */
    List<Field> fields() {
        return List.copyOf(fields.values());
    }

    /** The JSON Schema object ({@code type: object}, no additional properties). */
    Map<String, Object> toJsonSchema() {
        Map<String, Object> properties = new LinkedHashMap<>();
        List<String> required = new ArrayList<>();
        for (Field f : fields.values()) {
            Map<String, Object> p = new LinkedHashMap<>();
            switch (f.type()) {
                case STRING -> p.put("type", "string");
                case STRINGS -> {
                    p.put("type", "array");
                    p.put("items", Map.of("type", "string"));
                }
                case INTEGER -> p.put("type", "integer");
                case NUMBER -> p.put("type", "number");
                case BOOLEAN -> p.put("type", "boolean");
            }
            if (!f.values().isEmpty()) {
                p.put("enum", f.values());
            }
            if (f.minimum() != null) {
                p.put("minimum", f.type() == Type.INTEGER ? (Object) f.minimum().longValue() : f.minimum());
            }
            if (f.maximum() != null) {
                p.put("maximum", f.type() == Type.INTEGER ? (Object) f.maximum().longValue() : f.maximum());
            }
            p.put("description", f.description());
            properties.put(f.name(), p);
            if (f.required()) {
                required.add(f.name());
            }
        }
        Map<String, Object> schema = new LinkedHashMap<>();
        schema.put("type", "object");
        schema.put("properties", properties);
        schema.put("required", required);
        schema.put("additionalProperties", false);
        return schema;
    }

    /**
     * Checks {@code arguments} against the fields and returns them typed: strings as
     * {@code String}, string arrays as {@code List<String>}, integers as {@code Long}, numbers
     * as {@code Double}, booleans as {@code Boolean}; absent optional fields are left out.
     *
     * @throws ToolFailure {@code invalid_arguments} naming the first offending field
     */
    Map<String, Object> check(Map<String, Object> arguments) throws ToolFailure {
        Map<String, Object> in = arguments == null ? Map.of() : arguments;
        for (String name : in.keySet()) {
            if (!fields.containsKey(name)) {
                throw ToolFailure.invalidArguments(name, "unknown argument '" + name + "'; expected one of "
                        + fields.keySet());
            }
        }
        Map<String, Object> out = new LinkedHashMap<>();
        for (Field f : fields.values()) {
            Object v = in.get(f.name());
            if (v == null) {
                if (f.required()) {
                    throw ToolFailure.invalidArguments(f.name(), "'" + f.name() + "' is required");
                }
                continue;
            }
            out.put(f.name(), typed(f, v));
        }
        return out;
    }

    private static Object typed(Field f, Object v) throws ToolFailure {
        switch (f.type()) {
            case STRING -> {
                if (!(v instanceof String s)) {
                    throw wrongType(f, "a string");
                }
                if (!f.values().isEmpty() && !f.values().contains(s)) {
                    throw ToolFailure.invalidArguments(f.name(), "'" + f.name() + "' must be one of " + f.values()
                            + ", not '" + s + "'");
                }
                return s;
            }
            case STRINGS -> {
                if (!(v instanceof List<?> list)) {
                    throw wrongType(f, "an array of strings");
                }
                List<String> out = new ArrayList<>(list.size());
                for (Object item : list) {
                    if (!(item instanceof String s)) {
                        throw wrongType(f, "an array of strings");
                    }
                    out.add(s);
                }
                return List.copyOf(out);
            }
            case INTEGER -> {
                Long n = integral(v);
                if (n == null) {
                    throw wrongType(f, "an integer");
                }
                inRange(f, n.doubleValue());
                return n;
            }
            case NUMBER -> {
                if (!(v instanceof Number n) || !Double.isFinite(n.doubleValue())) {
                    throw wrongType(f, "a finite number");
                }
                inRange(f, n.doubleValue());
                return n.doubleValue();
            }
            case BOOLEAN -> {
                if (!(v instanceof Boolean b)) {
                    throw wrongType(f, "true or false");
                }
                return b;
            }
            default -> throw new IllegalStateException(f.type().name());
        }
    }

    private static Long integral(Object v) {
        if (v instanceof Integer || v instanceof Long || v instanceof Short || v instanceof Byte) {
            return ((Number) v).longValue();
        }
        if (v instanceof java.math.BigInteger b && b.bitLength() < 64) {
            return b.longValue();
        }
        if (v instanceof Number n) {
            double d = n.doubleValue();
            if (d == Math.rint(d) && Math.abs(d) < 9.0e15) {
                return (long) d;
            }
        }
        return null;
    }

    private static void inRange(Field f, double value) throws ToolFailure {
        if ((f.minimum() != null && value < f.minimum()) || (f.maximum() != null && value > f.maximum())) {
            throw ToolFailure.invalidArguments(f.name(), "'" + f.name() + "' must be within ["
                    + (f.minimum() == null ? "-inf" : f.minimum()) + ", " + (f.maximum() == null ? "inf" : f.maximum())
                    + "], not " + value);
        }
    }

    private static ToolFailure wrongType(Field f, String expected) {
        return ToolFailure.invalidArguments(f.name(), "'" + f.name() + "' must be " + expected);
    }
}
