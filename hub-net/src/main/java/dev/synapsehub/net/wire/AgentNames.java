package dev.synapsehub.net.wire;

import java.text.Normalizer;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * What an agent name may be, and whether it poses as the hub. A name is at most
 * {@link #MAX_CODE_POINTS} code points; it holds no control, format, separator (other than the
 * ASCII space), private-use, unassigned or surrogate code point; and it does not mix Latin
 * letters with Cyrillic or Greek ones, the classic way to forge a look-alike. The reserved names
 * are compared on a skeleton: NFKC, full case folding, and Cyrillic and Greek letters that look
 * like Latin ones mapped to those. This is a deliberate subset of Unicode's confusable detection
 * (UTS #39): enough that no name renders like {@code SynapseHub}, {@code synapse} or
 * {@code system}, without shipping the full confusables table (docs/protocol.md).
 */
public final class AgentNames {
    /** Longest name, in code points. */
    public static final int MAX_CODE_POINTS = 256;

    private static final Set<String> RESERVED = Set.of("synapsehub", "synapse", "system");

    /** Lower-case Cyrillic and Greek letters that render like a Latin letter, and that letter. */
    private static final Map<Integer, Character> LOOK_ALIKES = Map.ofEntries(
            Map.entry(0x0430, 'a'), Map.entry(0x0432, 'b'), Map.entry(0x0441, 'c'), Map.entry(0x0501, 'd'),
            Map.entry(0x0435, 'e'), Map.entry(0x0455, 's'), Map.entry(0x0456, 'i'), Map.entry(0x0458, 'j'),
            Map.entry(0x043A, 'k'), Map.entry(0x04CF, 'l'), Map.entry(0x043C, 'm'), Map.entry(0x043D, 'h'),
            Map.entry(0x043E, 'o'), Map.entry(0x0440, 'p'), Map.entry(0x051B, 'q'), Map.entry(0x0442, 't'),
            Map.entry(0x0443, 'y'), Map.entry(0x0445, 'x'), Map.entry(0x04BB, 'h'), Map.entry(0x051D, 'w'),
            Map.entry(0x044C, 'b'), Map.entry(0x0457, 'i'), Map.entry(0x043F, 'n'),
            Map.entry(0x03B1, 'a'), Map.entry(0x03B2, 'b'), Map.entry(0x03B5, 'e'), Map.entry(0x03B7, 'n'),
            Map.entry(0x03B9, 'i'), Map.entry(0x03BA, 'k'), Map.entry(0x03BD, 'v'), Map.entry(0x03BF, 'o'),
            Map.entry(0x03C1, 'p'), Map.entry(0x03C4, 't'), Map.entry(0x03C5, 'u'), Map.entry(0x03C7, 'x'),
            Map.entry(0x03C9, 'w'), Map.entry(0x03BC, 'u'));

    private AgentNames() {
    }

    /** Why {@code name} cannot be bound, in words for the error frame; null when it can. */
    public static String refusal(String name) {
        if (name.codePointCount(0, name.length()) > MAX_CODE_POINTS) {
            return "is longer than " + MAX_CODE_POINTS + " characters";
        }
        boolean latin = false;
        boolean cyrillicOrGreek = false;
        for (int i = 0; i < name.length(); ) {
            int cp = name.codePointAt(i);
            i += Character.charCount(cp);
            if (!allowed(cp)) {
                return String.format(Locale.ROOT, "contains the control, format or invisible character U+%04X", cp);
            }
            if (Character.isLetter(cp)) {
                Character.UnicodeScript script = Character.UnicodeScript.of(cp);
                latin |= script == Character.UnicodeScript.LATIN;
                cyrillicOrGreek |= script == Character.UnicodeScript.CYRILLIC
                        || script == Character.UnicodeScript.GREEK;
            }
        }
        if (latin && cyrillicOrGreek) {
            return "mixes Latin letters with Cyrillic or Greek ones";
        }
        return null;
    }

    /** True when {@code name} is, or renders like, one of the hub's own names. */
    public static boolean reserved(String name) {
        return RESERVED.contains(skeleton(name));
    }

    /** NFKC, full case folding, look-alike letters mapped to Latin. */
    static String skeleton(String name) {
        String folded = Normalizer.normalize(name, Normalizer.Form.NFKC)
                .toUpperCase(Locale.ROOT).toLowerCase(Locale.ROOT); // upper first: ß, ſ, K-sign fold fully
        folded = Normalizer.normalize(folded, Normalizer.Form.NFKC);
        StringBuilder out = new StringBuilder(folded.length());
        folded.codePoints().forEach(cp -> {
            Character latin = LOOK_ALIKES.get(cp);
            if (latin != null) {
                out.append(latin.charValue());
            } else {
                out.appendCodePoint(cp);
            }
        });
        return out.toString();
    }

    private static boolean allowed(int cp) {
        switch (Character.getType(cp)) {
            case Character.CONTROL:
            case Character.FORMAT:
            case Character.PRIVATE_USE:
            case Character.SURROGATE:
            case Character.UNASSIGNED:
            case Character.LINE_SEPARATOR:
            case Character.PARAGRAPH_SEPARATOR:
                return false;
            case Character.SPACE_SEPARATOR:
                return cp == ' ';
            default:
                return !Character.isIdentifierIgnorable(cp);
        }
    }
}
