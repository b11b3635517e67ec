package dev.synapsehub.spec.drift;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Binds docs/coordination-spec.md to the code. {@link #check} is a pure function from the
 * document text and the facts gathered from the code to the list of drift violations, so the
 * guard can be tested on deliberately drifted copies of the document.
 */
public final class SpecDriftGuard {

    /** Every invariant of seed 000; the document must keep them all (same ids, same meaning). */
    public static final List<String> SEED_INVARIANTS = List.of(
            "INV-ME-1", "INV-ME-2", "INV-ME-3", "INV-ME-4", "INV-ME-5",
            "INV-EF-1", "INV-EF-2", "INV-EF-3",
            "INV-LL-1", "INV-LL-2", "INV-LL-3", "INV-LL-4",
            "INV-JA-1", "INV-JA-2", "INV-JA-3", "INV-JA-4",
            "INV-RR-1", "INV-RR-2", "INV-RR-3",
            "INV-CR-1", "INV-CR-2", "INV-CR-3", "INV-CR-4",
            "INV-DG-1", "INV-DG-2", "INV-DG-3",
            "INV-CK-1", "INV-CK-2",
            "INV-MH-1", "INV-MH-2", "INV-MH-3", "INV-MH-4");

    /** What kind of drift was found. */
    public enum Kind {
        CONSTANT_VALUE, CONSTANT_UNPARSEABLE, CONSTANT_UNDOCUMENTED, CONSTANT_UNKNOWN, CONSTANT_DUPLICATE,
        INVARIANT_MISSING, INVARIANT_DUPLICATE, INVARIANT_NO_NORMATIVE, INVARIANT_UNPINNED,
        IMPLEMENTATION_MISSING, IMPLEMENTATION_UNKNOWN_CLASS, PINNED_FILE_MISSING,
        MODEL_TAG_NOT_ASSERTED, MODEL_ID_UNDOCUMENTED, MODEL_ID_UNTAGGED, MODEL_ID_NOT_CALLED,
        MODEL_SOURCE_UNDECLARED
    }

    /** One drift finding. */
    public record Violation(Kind kind, String subject, String detail) {
        @Override
        public String toString() {
            return kind + " " + subject + ": " + detail;
        }
    }

    /**
     * What the code says.
     *
     * @param constants every normative constant of the code, by name (Double, Integer, Long or String)
     * @param modelInvariants the model's {@code MODEL_INVARIANTS}
     * @param modelSource the concatenated source text of the model package
     * @param fileExists whether a repo-relative path exists
     * @param classExists whether a fully qualified class name loads
     */
    public record CodeFacts(Map<String, Object> constants, Set<String> modelInvariants, String modelSource,
                            Predicate<String> fileExists, Predicate<String> classExists) {
    }

    private static final Pattern CHECK_CALL = Pattern.compile("Invariant\\.check\\(\\s*\"(INV-[A-Z]{2,3}-\\d+)\"");
    private static final Pattern SYMBOL = Pattern.compile("^([a-z][a-z0-9-]*): ([a-zA-Z_][\\w.$]*)(#\\w+)?$");

    private SpecDriftGuard() {
    }

    /** Every drift between the document and the code; empty when they agree. */
    public static List<Violation> check(String documentText, CodeFacts facts) {
        SpecDocument doc = SpecDocument.parse(documentText);
        List<Violation> out = new ArrayList<>();
        checkConstants(doc, facts, out);
        checkInvariants(doc, facts, out);
        checkModel(doc, facts, out);
        return out;
    }

    private static void checkConstants(SpecDocument doc, CodeFacts facts, List<Violation> out) {
        Set<String> seen = new LinkedHashSet<>();
        for (SpecDocument.ConstantRow row : doc.constants()) {
            if (!seen.add(row.name())) {
                out.add(new Violation(Kind.CONSTANT_DUPLICATE, row.name(), "second row at line " + row.line()));
                continue;
            }
            if (!facts.constants().containsKey(row.name())) {
                out.add(new Violation(Kind.CONSTANT_UNKNOWN, row.name(), "no such constant in the code (line "
                        + row.line() + ")"));
                continue;
            }
            Object code = facts.constants().get(row.name());
            String raw = row.rawValue();
            if (raw == null) {
                out.add(new Violation(Kind.CONSTANT_UNPARSEABLE, row.name(), "no backticked value (line " + row.line() + ")"));
                continue;
            }
            if (code instanceof String s) {
                if (!(raw.length() >= 2 && raw.startsWith("\"") && raw.endsWith("\""))) {
                    out.add(new Violation(Kind.CONSTANT_UNPARSEABLE, row.name(), "expected a quoted string, found " + raw));
                } else if (!raw.substring(1, raw.length() - 1).equals(s)) {
                    out.add(new Violation(Kind.CONSTANT_VALUE, row.name(), "document says " + raw + ", code says \"" + s + "\""));
                }
                continue;
            }
            BigDecimal documented;
            try {
                documented = new BigDecimal(raw.strip());
            } catch (NumberFormatException e) {
                out.add(new Violation(Kind.CONSTANT_UNPARSEABLE, row.name(), "not a number: " + raw));
                continue;
            }
            boolean equal = code instanceof Double d
                    ? Double.compare(documented.doubleValue(), d) == 0
                    : documented.compareTo(new BigDecimal(code.toString())) == 0;
            if (!equal) {
                out.add(new Violation(Kind.CONSTANT_VALUE, row.name(), "document says " + raw + ", code says " + code));
            }
        }
        for (String name : new TreeSet<>(facts.constants().keySet())) {
            if (!seen.contains(name)) {
                out.add(new Violation(Kind.CONSTANT_UNDOCUMENTED, name, "the constants table has no row for it"));
            }
        }
    }

    private static void checkInvariants(SpecDocument doc, CodeFacts facts, List<Violation> out) {
        for (String id : SEED_INVARIANTS) {
            if (!doc.invariants().containsKey(id)) {
                out.add(new Violation(Kind.INVARIANT_MISSING, id, "seed 000 invariant is not documented"));
            }
        }
        for (Map.Entry<String, List<SpecDocument.InvariantSection>> e : doc.invariants().entrySet()) {
            String id = e.getKey();
            if (e.getValue().size() > 1) {
                out.add(new Violation(Kind.INVARIANT_DUPLICATE, id, e.getValue().size() + " sections"));
            }
            SpecDocument.InvariantSection s = e.getValue().get(0);
            if (!s.normative()) {
                out.add(new Violation(Kind.INVARIANT_NO_NORMATIVE, id, "no **Normative.** paragraph"));
            }
            if (s.pinnedFiles().isEmpty() && !s.notYetImplemented()) {
                out.add(new Violation(Kind.INVARIANT_UNPINNED, id,
                        "neither a Pinned-by file nor the line '" + SpecDocument.NOT_YET_IMPLEMENTED + "'"));
            }
            if (s.implementation().isEmpty() && !s.notYetImplemented()) {
                out.add(new Violation(Kind.IMPLEMENTATION_MISSING, id, "no backticked **Implementation.** symbol"));
            }
            for (String symbol : s.implementation()) {
                Matcher m = SYMBOL.matcher(symbol);
                if (m.matches() && !classExists(m.group(1), m.group(2), facts)) {
                    out.add(new Violation(Kind.IMPLEMENTATION_UNKNOWN_CLASS, id, symbol));
                }
            }
            for (String file : s.pinnedFiles()) {
                if (!facts.fileExists().test(file)) {
                    out.add(new Violation(Kind.PINNED_FILE_MISSING, id, file));
                }
            }
        }
    }

    /**
     * A class the spec-tests class path loads, or, for modules the spec suite does not depend on
     * (hub-journal, hub-net), a top-level source file in the module the symbol names.
     */
    private static boolean classExists(String module, String className, CodeFacts facts) {
        if (facts.classExists().test(className)) {
            return true;
        }
        int nested = className.indexOf('$');
        String topLevel = nested < 0 ? className : className.substring(0, nested);
        return facts.fileExists().test(module + "/src/main/java/" + topLevel.replace('.', '/') + ".java");
    }

    private static void checkModel(SpecDocument doc, CodeFacts facts, List<Violation> out) {
        Set<String> tagged = new TreeSet<>();
        for (Map.Entry<String, List<SpecDocument.InvariantSection>> e : doc.invariants().entrySet()) {
            if (e.getValue().get(0).modelTag()) {
                tagged.add(e.getKey());
            }
        }
        for (String id : tagged) {
            if (!facts.modelInvariants().contains(id)) {
                out.add(new Violation(Kind.MODEL_TAG_NOT_ASSERTED, id, "tagged [model] but not in MODEL_INVARIANTS"));
            }
        }
        for (String id : new TreeSet<>(facts.modelInvariants())) {
            if (!doc.invariants().containsKey(id)) {
                out.add(new Violation(Kind.MODEL_ID_UNDOCUMENTED, id, "the model asserts it; the document lacks it"));
            } else if (!tagged.contains(id)) {
                out.add(new Violation(Kind.MODEL_ID_UNTAGGED, id, "the model asserts it; the document does not tag it [model]"));
            }
        }
        Set<String> called = new TreeSet<>();
        Matcher m = CHECK_CALL.matcher(facts.modelSource());
        while (m.find()) {
            called.add(m.group(1));
        }
        for (String id : new TreeSet<>(facts.modelInvariants())) {
            if (!called.contains(id)) {
                out.add(new Violation(Kind.MODEL_ID_NOT_CALLED, id, "in MODEL_INVARIANTS but no Invariant.check(\"" + id
                        + "\", ...) in the model source"));
            }
        }
        for (String id : called) {
            if (!facts.modelInvariants().contains(id)) {
                out.add(new Violation(Kind.MODEL_SOURCE_UNDECLARED, id, "checked by the model source but missing from MODEL_INVARIANTS"));
            }
        }
    }
}
