package dev.synapsehub.core.scope;

import java.util.List;

/**
 * A claim's file scope: a worktree label and its normalised declared paths.
 *
 * @param worktree compared as an exact string; different worktrees never contend
 * @param paths normalised paths; empty or {@code [""]} means the whole worktree
 */
public record Scope(String worktree, List<String> paths) {
    public Scope {
        paths = List.copyOf(paths);
    }

    /** True when this scope covers its whole worktree. */
    public boolean wholeWorktree() {
        return paths.isEmpty() || paths.contains("");
    }

    /** The legacy literal conflict rule between two scopes (catalog §12.4), owner-agnostic. */
    public boolean conflictsWith(Scope other) {
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
