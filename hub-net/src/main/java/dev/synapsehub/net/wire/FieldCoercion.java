package dev.synapsehub.net.wire;

import com.fasterxml.jackson.databind.JsonNode;

import java.math.BigDecimal;
import java.util.OptionalLong;

/** The two coercion regimes of contract §4.5, plus our stricter guards (behaviour notes). */
public final class FieldCoercion {
    private FieldCoercion() {
    }

    /** A strict guard value: absent, a valid integer, or invalid (wrong JSON type or a fraction). */
    public record Guard(boolean present, boolean valid, long value) {
        static final Guard ABSENT = new Guard(false, true, 0);
        static final Guard INVALID = new Guard(true, false, 0);

        /** The value as a boxed long, null when absent. */
        public Long boxed() {
            return present ? value : null;
        }
    }

    /**
     * A strict guard ({@code epoch}, {@code expected_version}): a JSON number with an integral
     * value; null/absent = absent; string, boolean, fraction or anything else = invalid.
     */
    public static Guard guard(JsonNode node) {
        if (node == null || node.isNull()) {
            return Guard.ABSENT;
        }
        if (!node.isNumber()) {
            return Guard.INVALID;
        }
        BigDecimal d = node.decimalValue();
        try {
            if (d.signum() != 0 && d.stripTrailingZeros().scale() > 0) {
                return Guard.INVALID;
            }
            return new Guard(true, true, d.toBigIntegerExact().longValueExact());
        } catch (ArithmeticException e) {
            return Guard.INVALID;
        }
    }

    /** Tolerant TTL: numbers and numeric strings; booleans, non-finite or junk = null (default). */
    public static Double ttl(JsonNode node) {
        if (node == null || node.isNull() || node.isBoolean()) {
            return null;
        }
        double v;
        if (node.isNumber()) {
            v = node.doubleValue();
        } else if (node.isTextual()) {
            try {
                v = Double.parseDouble(node.textValue().strip());
            } catch (NumberFormatException e) {
                return null;
            }
        } else {
            return null;
        }
        return Double.isFinite(v) ? v : null;
    }

    /** Tolerant float ≥ 0 (freshness): numbers and numeric strings, else empty. */
    public static Double nonNegative(JsonNode node) {
        Double v = ttl(node);
        return v == null ? null : Math.max(0.0, v);
    }

    /** Tolerant int-ish: numbers (truncated), numeric strings, else empty. */
    public static OptionalLong tolerantLong(JsonNode node) {
        Double v = ttl(node);
        return v == null ? OptionalLong.empty() : OptionalLong.of((long) v.doubleValue());
    }

    /** The string value of a member, null when absent or JSON null. */
    public static String text(JsonNode node) {
        return node == null || node.isNull() || !node.isTextual() ? null : node.textValue();
    }

    /** True when the member is present, non-null and not a string. */
    public static boolean notText(JsonNode node) {
        return node != null && !node.isNull() && !node.isTextual();
    }

    /** Python-style truthiness for bool-ish flags. */
    public static boolean truthy(JsonNode node) {
        if (node == null || node.isNull()) {
            return false;
        }
        if (node.isBoolean()) {
            return node.booleanValue();
        }
        if (node.isNumber()) {
            return node.doubleValue() != 0.0;
        }
        if (node.isTextual()) {
            return !node.textValue().isEmpty();
        }
        return node.size() > 0;
    }
}
