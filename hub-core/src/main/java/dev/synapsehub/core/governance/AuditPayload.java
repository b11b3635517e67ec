package dev.synapsehub.core.governance;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The top-level text and text-array members of an audit record's JSON payload. The core reads
 * the federation records it governs claims by (partitions, quarantines) without a JSON library
 * (hub-core stays free of Jackson), so this is a small strict reader: any other member value
 * (number, object, literal) is skipped, and text that is not one JSON object is refused.
 */
final class AuditPayload {
    private final String text;
    private int at;
    private final Map<String, Object> members = new LinkedHashMap<>();

    private AuditPayload(String text) {
        this.text = text;
    }

    /** The members of {@code json}; throws {@link IllegalArgumentException} when it is not one JSON object. */
    static AuditPayload read(String json) {
        AuditPayload p = new AuditPayload(json);
        p.space();
        p.object();
        p.space();
        if (p.at != json.length()) {
            throw new IllegalArgumentException("trailing text after the payload object");
        }
        return p;
    }

    /** A text member, or null when absent or not text. */
    String text(String name) {
        return members.get(name) instanceof String s ? s : null;
    }

    /** A text-array member (non-text items dropped), or an empty list. */
    @SuppressWarnings("unchecked")
    List<String> texts(String name) {
        return members.get(name) instanceof List<?> l ? Collections.unmodifiableList((List<String>) l) : List.of();
    }

    private void object() {
        expect('{');
        space();
        if (peek() == '}') {
            at++;
            return;
        }
        while (true) {
            space();
            String name = string();
            space();
            expect(':');
            space();
            Object v = value(true);
            if (v != null) {
                members.put(name, v);
            }
            space();
            char c = next();
            if (c == '}') {
                return;
            }
            if (c != ',') {
                throw new IllegalArgumentException("expected ',' or '}' at " + (at - 1));
            }
        }
    }

    /** A member value: text and arrays of text are kept (top level only), everything else skipped. */
    private Object value(boolean top) {
        char c = peek();
        if (c == '"') {
            return string();
        }
        if (c == '[') {
            at++;
            List<String> items = new ArrayList<>();
            space();
            if (peek() == ']') {
                at++;
                return top ? items : null;
            }
            while (true) {
                space();
                Object item = value(false);
                if (item instanceof String s) {
                    items.add(s);
                }
                space();
                char d = next();
                if (d == ']') {
                    return top ? items : null;
                }
                if (d != ',') {
                    throw new IllegalArgumentException("expected ',' or ']' at " + (at - 1));
                }
            }
        }
        if (c == '{') {
            AuditPayload nested = new AuditPayload(text);
            nested.at = at;
            nested.object();
            at = nested.at;
            return null;
        }
        int start = at;
        while (at < text.length() && "+-0123456789.eEtrufalsn".indexOf(text.charAt(at)) >= 0) {
            at++;
        }
        if (start == at) {
            throw new IllegalArgumentException("unexpected '" + c + "' at " + at);
        }
        return null;
    }

    private String string() {
        expect('"');
        StringBuilder out = new StringBuilder();
        while (true) {
            char c = next();
            if (c == '"') {
                return out.toString();
            }
            if (c != '\\') {
                out.append(c);
                continue;
            }
            char e = next();
            switch (e) {
                case '"', '\\', '/' -> out.append(e);
                case 'b' -> out.append('\b');
                case 'f' -> out.append('\f');
                case 'n' -> out.append('\n');
                case 'r' -> out.append('\r');
                case 't' -> out.append('\t');
                case 'u' -> {
                    if (at + 4 > text.length()) {
                        throw new IllegalArgumentException("short \\u escape");
                    }
                    out.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
                    at += 4;
                }
                default -> throw new IllegalArgumentException("bad escape \\" + e);
            }
        }
    }

    private void space() {
        while (at < text.length() && " \t\r\n".indexOf(text.charAt(at)) >= 0) {
            at++;
        }
    }

    private char peek() {
        if (at >= text.length()) {
            throw new IllegalArgumentException("the payload ends early");
        }
        return text.charAt(at);
    }

    private char next() {
        char c = peek();
        at++;
        return c;
    }

    private void expect(char c) {
        if (next() != c) {
            throw new IllegalArgumentException("expected '" + c + "' at " + (at - 1));
        }
    }
}
