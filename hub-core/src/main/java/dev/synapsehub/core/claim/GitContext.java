package dev.synapsehub.core.claim;

import dev.synapsehub.core.PythonWhitespace;

/**
 * Opaque branch context a claimant may attach; stored and echoed, never interpreted.
 *
 * @param branch the working branch (may be empty)
 * @param base the base branch; empty becomes {@code main}
 * @param autoReleaseOn one of {@code manual}, {@code commit}, {@code merge}
 */
public record GitContext(String branch, String base, String autoReleaseOn) {
    public GitContext {
        branch = branch == null ? "" : branch.strip();
        base = base == null || base.isBlank() ? "main" : base.strip();
        autoReleaseOn = normalizeAutoRelease(autoReleaseOn);
    }

    /**
     * A claim frame's {@code git} members, trimmed as the reference trims them (Python's
     * whitespace). The constructor's own trim stays Java's: it also runs when a journal or a
     * snapshot is decoded, and a stored value must decode as it always has.
     */
    public static GitContext fromWire(String branch, String base, String autoReleaseOn) {
        return new GitContext(PythonWhitespace.strip(branch), PythonWhitespace.strip(base),
                PythonWhitespace.strip(autoReleaseOn));
    }

    private static String normalizeAutoRelease(String value) {
        if (value == null) {
            return "merge";
        }
        String v = value.strip().toLowerCase(java.util.Locale.ROOT);
        return switch (v) {
            case "manual", "commit", "merge" -> v;
            default -> "manual";
        };
    }
}
