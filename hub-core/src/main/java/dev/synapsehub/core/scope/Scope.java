package dev.synapsehub.core.scope;

import java.util.List;

/**
 * A claim's file scope: a worktree label and its normalised declared paths, and the client's
 * {@link PathIdentity} of them when it sent one.
 *
 * @param worktree compared as an exact string between legacy scopes; different worktrees never contend
 * @param paths normalised paths; empty or {@code [""]} means the whole worktree
 * @param identity the claim's {@code path_identity}, or null
 */
public record Scope(String worktree, List<String> paths, PathIdentity identity) {
    public Scope {
        paths = List.copyOf(paths);
    }

    /** A scope without a path identity. */
    public Scope(String worktree, List<String> paths) {
        this(worktree, paths, null);
    }

    /** True when this scope covers its whole worktree. */
    public boolean wholeWorktree() {
        return paths.isEmpty() || paths.contains("");
    }

    /**
     * Whether two scopes contend, owner-agnostic: between two legacy scopes the literal rule
     * (catalog §12.4); when either carries a path identity, the rules of contract A8.
     */
    public boolean conflictsWith(Scope other) {
        if (identity != null && other.identity != null) {
            return identity.conflictsWith(other.identity, wholeWorktree(), other.wholeWorktree());
        }
        if (identity != null) {
            return identity.conflictsWithLegacy(other, wholeWorktree());
        }
        if (other.identity != null) {
            return other.identity.conflictsWithLegacy(this, other.wholeWorktree());
        }
        if (!worktree.equals(other.worktree)) {
            return false;
        }
        if (wholeWorktree() || other.wholeWorktree()) {
            return true;
        }
        for (String a : paths) {
            for (String b : other.paths) {
                if (PathNormalizer.overlaps(a, b)) {
                    return true;
                }
            }
        }
        return false;
    }
}
