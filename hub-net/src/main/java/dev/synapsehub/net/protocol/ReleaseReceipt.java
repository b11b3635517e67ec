package dev.synapsehub.net.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.PythonWhitespace;
import dev.synapsehub.net.wire.HubFrames;
import dev.synapsehub.net.wire.PythonFloatFormat;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The closeout evidence of a release and its advisory grade (contract §5.5, §6.3, and the
 * decision table of A11 R1–R3, which existing tools read): the six cleaned lists, the
 * {@code confidence} text, the parsed {@code freshness_seconds}, the {@code epistemic_status}
 * with its exact reasons, and the text of the {@code assessment} note.
 *
 * @param freshnessSeconds the unclamped parsed age (may be negative, infinite or NaN), or null
 *     when absent or unparseable
 */
public record ReleaseReceipt(
        List<String> evidence,
        List<String> artifacts,
        List<String> knownFailures,
        List<String> changedFiles,
        List<String> generatedArtifacts,
        List<String> approvals,
        String confidence,
        Double freshnessSeconds) {

    static final int MAX_ITEMS = 50;
    static final int MAX_CODE_POINTS = 500;
    static final double STALE_AFTER_SECONDS = 3600;

    static final String KNOWN_FAILURES = "known failures declared";
    static final String POSITIVE = "positive evidence present";
    static final String NO_POSITIVE = "no positive evidence, artifact, changed file, generated artifact, or approval";
    static final String NO_FRESHNESS = "freshness_seconds missing";
    static final String TOO_OLD = "evidence age exceeds 3600 seconds";
    static final String UNVERIFIED = "fresh evidence present but unverified";

    private static final Pattern NON_FINITE = Pattern.compile("(?i)[+-]?(?:inf|infinity|nan)");

    /** Reads the top-level receipt members of a release frame (R1); an object under {@code evidence} counts as none. */
    public static ReleaseReceipt from(JsonNode frame) {
        JsonNode c = frame.get("confidence");
        String confidence = c == null ? "" : cut(pythonStrip(pythonText(c, true)));
        return new ReleaseReceipt(list(frame.get("evidence")), list(frame.get("artifacts")),
                list(frame.get("known_failures")), list(frame.get("changed_files")),
                list(frame.get("generated_artifacts")), list(frame.get("approvals")),
                confidence.isEmpty() ? null : confidence, freshness(frame.get("freshness_seconds")));
    }

    /** True when the receipt carries evidence, so an {@code assessment} note is posted (R3 trigger). */
    public boolean hasEvidence() {
        return positive() || !knownFailures.isEmpty() || confidence != null || freshnessSeconds != null;
    }

    private boolean positive() {
        return !evidence.isEmpty() || !artifacts.isEmpty() || !changedFiles.isEmpty() || !generatedArtifacts.isEmpty()
                || !approvals.isEmpty();
    }

    /** The hub's advisory grade: the first matching row of R2. */
    public String epistemicStatus() {
        if (!knownFailures.isEmpty()) {
            return "degraded";
        }
        if (!positive()) {
            return "unsupported";
        }
        if (freshnessSeconds == null) {
            return "needs_freshness";
        }
        return freshnessSeconds > STALE_AFTER_SECONDS ? "stale" : "unverified"; // NaN is not stale
    }

    /** The exact reasons of R2, in order: two per row except {@code unsupported}. */
    public List<String> epistemicReasons() {
        if (!knownFailures.isEmpty()) {
            return List.of(KNOWN_FAILURES, positive() ? POSITIVE : NO_POSITIVE);
        }
        if (!positive()) {
            return List.of(NO_POSITIVE);
        }
        if (freshnessSeconds == null) {
            return List.of(POSITIVE, NO_FRESHNESS);
        }
        return List.of(POSITIVE, freshnessSeconds > STALE_AFTER_SECONDS ? TOO_OLD : UNVERIFIED);
    }

    /** The receipt's {@code freshness_seconds}: negative values clamped to 0.0, NaN kept; null when absent. */
    Double clampedFreshness() {
        return freshnessSeconds == null ? null : freshnessSeconds < 0 ? 0.0 : freshnessSeconds;
    }

    /** The receipt object of §6.3, members in the observed order (R2). */
    public void writeTo(ObjectNode receipt, String taskId, String owner) {
        receipt.put("task_id", taskId);
        receipt.put("owner", owner);
        receipt.put("released", true);
        HubFrames.putStrings(receipt, "evidence", evidence);
        HubFrames.putStrings(receipt, "artifacts", artifacts);
        HubFrames.putStrings(receipt, "known_failures", knownFailures);
        HubFrames.putStrings(receipt, "changed_files", changedFiles);
        HubFrames.putStrings(receipt, "generated_artifacts", generatedArtifacts);
        HubFrames.putStrings(receipt, "approvals", approvals);
        receipt.put("epistemic_status", epistemicStatus());
        HubFrames.putStrings(receipt, "epistemic_reasons", epistemicReasons());
        if (confidence != null) {
            receipt.put("confidence", confidence);
        }
        Double fresh = clampedFreshness();
        // a non-finite age grades the release but is never written: Infinity and NaN are not
        // JSON, and a strict client would drop the whole release_granted (docs/protocol.md)
        if (fresh != null && Double.isFinite(fresh)) {
            HubFrames.putFloat(receipt, "freshness_seconds", fresh);
        }
    }

    /** The text of the {@code assessment} note (R3), uncapped. */
    public String assessment() {
        List<String> sections = new ArrayList<>();
        section(sections, "evidence", evidence);
        section(sections, "artifacts", artifacts);
        section(sections, "known_failures", knownFailures);
        section(sections, "changed_files", changedFiles);
        section(sections, "generated_artifacts", generatedArtifacts);
        section(sections, "approvals", approvals);
        if (confidence != null) {
            sections.add("confidence=" + confidence);
        }
        Double fresh = clampedFreshness();
        if (fresh != null) {
            sections.add("freshness_seconds=" + (fresh.isNaN() ? "nan" : fresh.isInfinite() ? "inf"
                    : PythonFloatFormat.format(fresh)));
        }
        sections.add("epistemic_status=" + epistemicStatus());
        sections.add("epistemic_reasons=" + String.join(", ", epistemicReasons()));
        return "release receipt: " + String.join("; ", sections);
    }

    private static void section(List<String> sections, String name, List<String> items) {
        if (!items.isEmpty()) {
            sections.add(name + "=" + String.join(", ", items));
        }
    }

    /** R1.1: a string is one item, an array one per element (non-strings as Python text), else none. */
    private static List<String> list(JsonNode node) {
        List<String> out = new ArrayList<>();
        if (node == null) {
            return out;
        }
        if (node.isTextual()) {
            add(out, node.textValue());
        } else if (node.isArray()) {
            for (JsonNode item : node) {
                if (out.size() >= MAX_ITEMS) {
                    break;
                }
                add(out, pythonText(item, true));
            }
        }
        return out;
    }

    private static void add(List<String> out, String value) {
        String v = pythonStrip(value);
        if (!v.isEmpty()) {
            out.add(cut(v));
        }
    }

    /** R1.3: the value's Python text parsed as a Python float literal; null when it is not one. */
    static Double freshness(JsonNode node) {
        if (node == null || node.isNull() || node.isBoolean() || node.isContainerNode()) {
            return null;
        }
        String text = pythonStrip(node.isTextual() ? node.textValue() : pythonText(node, true));
        if (NON_FINITE.matcher(text).matches()) {
            String t = text.toLowerCase(java.util.Locale.ROOT);
            return t.endsWith("nan") ? Double.NaN
                    : t.startsWith("-") ? Double.NEGATIVE_INFINITY : Double.POSITIVE_INFINITY;
        }
        String ascii = floatLiteral(text);
        // too large for a double: infinity, as Python
        return ascii == null ? null : Double.parseDouble(ascii);
    }

    /**
     * The ASCII form of a Python float literal (Unicode decimal digits mapped to 0-9, underscores
     * between digits dropped), or null when {@code text} is not one. A loop, not a regex: a
     * backtracking pattern overflows the stack on a few thousand digits.
     */
    static String floatLiteral(String text) {
        StringBuilder out = new StringBuilder(text.length());
        int i = sign(text, 0, out);
        int end = digitPart(text, i, out);
        if (end < 0) {
            return null;
        }
        boolean digits = end > i;
        i = end;
        if (i < text.length() && text.charAt(i) == '.') {
            out.append('.');
            end = digitPart(text, ++i, out);
            if (end < 0) {
                return null;
            }
            digits |= end > i;
            i = end;
        }
        if (!digits) {
            return null;
        }
        if (i < text.length() && (text.charAt(i) == 'e' || text.charAt(i) == 'E')) {
            out.append('e');
            i = sign(text, i + 1, out);
            end = digitPart(text, i, out);
            if (end <= i) {
                return null; // no exponent digits, or a misplaced underscore
            }
            i = end;
        }
        return i == text.length() ? out.toString() : null;
    }

    private static int sign(String text, int i, StringBuilder out) {
        if (i < text.length() && (text.charAt(i) == '+' || text.charAt(i) == '-')) {
            out.append(text.charAt(i));
            return i + 1;
        }
        return i;
    }

    /**
     * Copies the digits from {@code i} on (any Unicode decimal digit, as Python's {@code float}
     * takes them; one underscore allowed between two digits); the index after them, or -1 when
     * an underscore is not between two digits.
     */
    private static int digitPart(String text, int i, StringBuilder out) {
        boolean afterUnderscore = false;
        int start = i;
        while (i < text.length()) {
            int cp = text.codePointAt(i);
            if (cp == '_' && i > start && !afterUnderscore) {
                afterUnderscore = true;
                i++;
                continue;
            }
            int digit = Character.isDigit(cp) ? Character.digit(cp, 10) : -1;
            if (digit < 0) {
                break;
            }
            out.append((char) ('0' + digit));
            afterUnderscore = false;
            i += Character.charCount(cp);
        }
        return afterUnderscore ? -1 : i;
    }

    /**
     * Python's {@code str()} of the decoded JSON value ({@code top}) or its {@code repr()} inside a
     * container: {@code True}, {@code None}, {@code 1.5}, {@code 1e+20}, {@code ['x']}, {@code {'a': 1}}.
     */
    static String pythonText(JsonNode node, boolean top) {
        if (node.isTextual()) {
            return top ? node.textValue() : pythonRepr(node.textValue());
        }
        if (node.isNull()) {
            return "None";
        }
        if (node.isBoolean()) {
            return node.booleanValue() ? "True" : "False";
        }
        if (node.isIntegralNumber()) {
            return node.bigIntegerValue().toString();
        }
        if (node.isNumber()) {
            return PythonFloatFormat.format(node.doubleValue());
        }
        if (node.isArray()) {
            List<String> items = new ArrayList<>();
            node.forEach(item -> items.add(pythonText(item, false)));
            return "[" + String.join(", ", items) + "]";
        }
        List<String> members = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            members.add(pythonRepr(e.getKey()) + ": " + pythonText(e.getValue(), false));
        }
        return "{" + String.join(", ", members) + "}";
    }

    /** Python's {@code repr()} of a string: single quotes unless it holds one and no double quote. */
    private static String pythonRepr(String s) {
        char quote = s.indexOf('\'') >= 0 && s.indexOf('"') < 0 ? '"' : '\'';
        StringBuilder b = new StringBuilder(s.length() + 2).append(quote);
        for (int i = 0; i < s.length(); i++) {
            char ch = s.charAt(i);
            if (ch == quote || ch == '\\') {
                b.append('\\').append(ch);
            } else if (ch == '\n') {
                b.append("\\n");
            } else if (ch == '\r') {
                b.append("\\r");
            } else if (ch == '\t') {
                b.append("\\t");
            } else if (ch < 0x20 || ch == 0x7f) {
                b.append(String.format("\\x%02x", (int) ch));
            } else {
                b.append(ch);
            }
        }
        return b.append(quote).toString();
    }

    /** Trims Python's whitespace (U+00A0, U+2007, U+202F... too), as the reference does. */
    static String pythonStrip(String s) {
        return PythonWhitespace.strip(s);
    }

    /** Cut to 500 code points (an astral character counts once). */
    private static String cut(String s) {
        if (s.codePointCount(0, s.length()) <= MAX_CODE_POINTS) {
            return s;
        }
        return s.substring(0, s.offsetByCodePoints(0, MAX_CODE_POINTS));
    }
}
