package dev.synapsehub.core.scope;

import dev.synapsehub.core.PythonWhitespace;
import dev.synapsehub.core.SpecConstants;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Literal path normalisation of declared claim paths (behaviour catalog §12.1–12.2).
 *
 * <p>Widening is deliberate: anything suspicious makes the claim cover the whole worktree,
 * which may over-claim but never under-claims.
 */
public final class PathNormalizer {
    /** The stored form of a claim whose declared paths widened to the worktree root. */
    public static final List<String> WHOLE_WORKTREE = List.of("");

    private PathNormalizer() {
    }

    /** Normalises one path: trim, backslashes to '/', absolute or '..' to root, drop '' and '.'. */
    public static String normalize(String raw) {
        String s = PythonWhitespace.strip(raw).replace('\\', '/');
        if (s.startsWith("/")) {
            return "";
        }
        StringBuilder out = new StringBuilder(s.length());
        int start = 0;
        int len = s.length();
        while (start <= len) {
            int slash = s.indexOf('/', start);
            int end = slash < 0 ? len : slash;
            int segLen = end - start;
            if (segLen == 2 && s.charAt(start) == '.' && s.charAt(start + 1) == '.') {
                return "";
            }
            boolean skip = segLen == 0 || (segLen == 1 && s.charAt(start) == '.');
            if (!skip) {
                if (out.length() > 0) {
                    out.append('/');
                }
                out.append(s, start, end);
            }
            start = end + 1;
        }
        return out.toString();
    }

    /**
     * Normalises a declared path list into what a claim stores: {@code []} or {@code [""]} for
     * the whole worktree, else the distinct normalised paths in first-seen order.
     */
    public static List<String> normalizeDeclared(List<String> raw, int maxDeclaredPaths) {
        if (raw == null || raw.isEmpty()) {
            return List.of();
        }
        int cap = Math.max(1, maxDeclaredPaths);
        Set<String> kept = new LinkedHashSet<>();
        for (String path : raw) {
            if (path == null
                    || path.codePointCount(0, path.length()) > SpecConstants.MAX_PATH_LENGTH
                    || !isPrintable(path)) {
                return WHOLE_WORKTREE;
            }
            String normalized = normalize(path);
            if (normalized.isEmpty()) {
                return WHOLE_WORKTREE;
            }
            if (kept.add(normalized) && kept.size() > cap) {
                return WHOLE_WORKTREE;
            }
        }
        return List.copyOf(new ArrayList<>(kept));
    }

    /** True when both paths overlap: equal, either is the root, or one is a directory ancestor. */
    public static boolean overlaps(String a, String b) {
        if (a.isEmpty() || b.isEmpty() || a.equals(b)) {
            return true;
        }
        return isAncestor(a, b) || isAncestor(b, a);
    }

    private static boolean isAncestor(String ancestor, String path) {
        return path.length() > ancestor.length()
                && path.startsWith(ancestor)
                && path.charAt(ancestor.length()) == '/';
    }

    /** Python {@code str.isprintable}: no Cc, Cf, Cs, Co, Cn, Zl, Zp or Zs except the ASCII space. */
    public static boolean isPrintable(String s) {
        for (int i = 0; i < s.length(); ) {
            int cp = s.codePointAt(i);
            i += Character.charCount(cp);
            if (cp == ' ') {
                continue;
            }
            switch (Character.getType(cp)) {
                case Character.CONTROL, Character.FORMAT, Character.SURROGATE, Character.PRIVATE_USE,
                        Character.UNASSIGNED, Character.LINE_SEPARATOR, Character.PARAGRAPH_SEPARATOR,
                        Character.SPACE_SEPARATOR -> {
                    return false;
                }
                default -> {
                }
            }
        }
        return true;
    }
}
