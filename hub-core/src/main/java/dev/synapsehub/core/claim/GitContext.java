package dev.synapsehub.core.claim;

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
