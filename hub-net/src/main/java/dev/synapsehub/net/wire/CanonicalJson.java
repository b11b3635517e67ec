package dev.synapsehub.net.wire;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * Canonical JSON as Python's {@code json.dumps(sort_keys=True, separators=(",", ":"))} writes
 * it: keys sorted by Unicode code point, compact, floats in Python {@code repr} style. With
 * {@code asciiOnly} every character outside printable ASCII is escaped (idempotency digest,
 * §4.6); without it non-ASCII and DEL stay literal (HMAC bytes, §9).
 */
public final class CanonicalJson {
    private CanonicalJson() {
    }

    /** The canonical text of {@code node}. */
    public static String write(JsonNode node, boolean asciiOnly) {
        StringBuilder out = new StringBuilder(256);
        append(out, node, asciiOnly, true);
        return out.toString();
    }

    /** Like {@link #write} but members in their own order, as Python's {@code json.dumps} without sort_keys. */
    public static String writeInOrder(JsonNode node, boolean asciiOnly) {
        StringBuilder out = new StringBuilder(256);
        append(out, node, asciiOnly, false);
        return out.toString();
    }

    private static void append(StringBuilder out, JsonNode node, boolean ascii, boolean sortKeys) {
        if (node == null || node.isNull() || node.isMissingNode()) {
            out.append("null");
        } else if (node.isObject()) {
            List<Map.Entry<String, JsonNode>> fields = new ArrayList<>();
            node.fields().forEachRemaining(fields::add);
            if (sortKeys) {
                fields.sort((a, b) -> compareCodePoints(a.getKey(), b.getKey()));
            }
            out.append('{');
            boolean first = true;
            for (Map.Entry<String, JsonNode> field : fields) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                appendString(out, field.getKey(), ascii);
                out.append(':');
                append(out, field.getValue(), ascii, sortKeys);
            }
            out.append('}');
        } else if (node.isArray()) {
            out.append('[');
            Iterator<JsonNode> it = node.elements();
            boolean first = true;
            while (it.hasNext()) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                append(out, it.next(), ascii, sortKeys);
            }
            out.append(']');
        } else if (node.isTextual()) {
            appendString(out, node.textValue(), ascii);
        } else if (node.isBoolean()) {
            out.append(node.booleanValue() ? "true" : "false");
        } else if (node.isIntegralNumber()) {
            out.append(node.bigIntegerValue().toString());
        } else if (node.isNumber()) {
            out.append(PythonFloatFormat.format(node.doubleValue()));
        } else if (node.isPojo()) {
            out.append(node.toString()); // raw numbers written by the hub itself
        } else {
            out.append(node.toString());
        }
    }

    /** Compares two strings by Unicode code point (not UTF-16 unit), like Python. */
    public static int compareCodePoints(String a, String b) {
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length()) {
            int ca = a.codePointAt(i);
            int cb = b.codePointAt(j);
            if (ca != cb) {
                return Integer.compare(ca, cb);
            }
            i += Character.charCount(ca);
            j += Character.charCount(cb);
        }
        return Integer.compare(a.length() - i, b.length() - j);
    }

    private static void appendString(StringBuilder out, String s, boolean ascii) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                default -> {
                    if (c < 0x20 || (ascii && c > 0x7e)) {
                        out.append("\\u").append(String.format("%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }
}
