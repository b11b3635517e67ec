package dev.synapsehub.spec.model;

import java.util.ArrayList;
import java.util.List;

/**
 * The model's own scope algebra (seed 000 INV-ME-2..4), written from the spec and not from
 * the core: the model must not borrow the implementation it checks. Its path alphabet is
 * already normalised, so no normalisation is needed here.
 */
final class ModelScope {
    private ModelScope() {
    }

    /** What a claim stores for an already-normalised declared list: [""] if any is root, else distinct in order. */
    static List<String> stored(List<String> declared) {
        List<String> out = new ArrayList<>();
        for (String p : declared) {
            if (p.isEmpty()) {
                return List.of("");
            }
            if (!out.contains(p)) {
                out.add(p);
            }
        }
        return List.copyOf(out);
    }

    /** Empty, or containing the root: the whole worktree. */
    static boolean whole(List<String> paths) {
        return paths.isEmpty() || paths.contains("");
    }

    /** Equal, either is the root, or one is a directory ancestor of the other. */
    static boolean overlap(String a, String b) {
        return a.equals(b) || a.isEmpty() || b.isEmpty()
                || b.startsWith(a + "/") || a.startsWith(b + "/");
    }

    /** True when some path of one list overlaps some path of the other (worktrees ignored). */
    static boolean pathsOverlap(List<String> a, List<String> b) {
        if (whole(a) || whole(b)) {
            return true;
        }
        for (String x : a) {
            for (String y : b) {
                if (overlap(x, y)) {
                    return true;
                }
            }
        }
        return false;
    }

    /** Conflict of two scopes: same worktree (exact label) and overlapping paths. */
    static boolean conflict(String worktreeA, List<String> a, String worktreeB, List<String> b) {
        return worktreeA.equals(worktreeB) && pathsOverlap(a, b);
    }
}
