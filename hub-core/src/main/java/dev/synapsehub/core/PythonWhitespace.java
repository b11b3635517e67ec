package dev.synapsehub.core;

/**
 * Python's {@code str.strip()} and {@code str.isspace()} notion of whitespace, which the
 * reference hub trims with and Java's {@code strip()}/{@code isBlank()} do not match: Java
 * misses U+00A0, U+2007 and U+202F (and its {@code trim()} misses U+0085 and more). One helper,
 * so every trimmed member (channel ids, reasons, wake capabilities, receipt items) agrees.
 */
public final class PythonWhitespace {
    private PythonWhitespace() {
    }

    /** {@code s.strip()} in Python; null stays null. */
    public static String strip(String s) {
        if (s == null) {
            return null;
        }
        int from = 0;
        int to = s.length();
        while (from < to && isSpace(s.charAt(from))) {
            from++;
        }
        while (to > from && isSpace(s.charAt(to - 1))) {
            to--;
        }
        return from == 0 && to == s.length() ? s : s.substring(from, to);
    }

    /** True when {@code s} is null, empty, or Python whitespace only. */
    public static boolean isBlank(String s) {
        return s == null || strip(s).isEmpty();
    }

    /** True for the characters Python's {@code str.isspace()} accepts (none is astral). */
    public static boolean isSpace(char c) {
        return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20) || c == 0x85 || c == 0xa0 || c == 0x1680
                || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f
                || c == 0x3000;
    }
}
