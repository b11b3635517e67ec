package dev.synapsehub.core.scope;

import java.text.Normalizer;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * A claim's optional {@code path_identity} (wire contract §7.7, A8): the client's canonical view
 * of its worktree and of each declared path, aligned one-to-one with the normalised display
 * paths, with an {@code object_id} per path when the client knows one (a file's identity on its
 * file system, so two hard links to one file share it). The hub never reads the file system:
 * the client computes object ids, the hub only compares them, under the contract's conditions.
 *
 * @param worktreePath canonical worktree path (case-folded when not case sensitive)
 * @param worktreeObjectId the worktree's object id, {@code ""} when unknown
 * @param filesystemNamespace the file system the object ids belong to, {@code ""} when unknown
 * @param caseSensitive the client's case policy
 * @param rows one per normalised display path, in the same order
 */
public record PathIdentity(String worktreePath, String worktreeObjectId, String filesystemNamespace,
                           boolean caseSensitive, List<Row> rows) {
    /** One path's identity; {@code objectId} and {@code objectScope} are {@code ""} when absent. */
    public record Row(String gitPath, String filesystemPath, String objectId, String objectScope) {
        public Row {
            Objects.requireNonNull(gitPath, "gitPath");
            filesystemPath = filesystemPath == null ? "" : filesystemPath;
            objectId = objectId == null ? "" : objectId;
            objectScope = objectScope == null ? "" : objectScope;
        }
    }

    public PathIdentity {
        Objects.requireNonNull(worktreePath, "worktreePath");
        worktreeObjectId = worktreeObjectId == null ? "" : worktreeObjectId;
        filesystemNamespace = filesystemNamespace == null ? "" : filesystemNamespace;
        rows = List.copyOf(rows);
    }

    /** NFC, then Unicode case folding unless {@code caseSensitive} (the contract's canonical form). */
    public static String fold(String s, boolean caseSensitive) {
        String nfc = Normalizer.normalize(s, Normalizer.Form.NFC);
        // upper then lower approximates full case folding (ß and ẞ fold to ss, final sigma to sigma)
        return caseSensitive ? nfc : nfc.toUpperCase(Locale.ROOT).toLowerCase(Locale.ROOT);
    }

    /**
     * True when this identity describes the claim's display scope: the display worktree, folded
     * with this identity's policy, is {@link #worktreePath}, and each display path, folded, is its
     * row's {@code git_path} (§7.7 alignment).
     */
    public boolean alignsWith(String displayWorktree, List<String> displayPaths) {
        if (!fold(displayWorktree, caseSensitive).equals(worktreePath) || displayPaths.size() != rows.size()) {
            return false;
        }
        for (int i = 0; i < rows.size(); i++) {
            if (!fold(displayPaths.get(i), caseSensitive).equals(rows.get(i).gitPath())) {
                return false;
            }
        }
        return true;
    }

    /** A8 rule 1: object ids may be compared (same non-empty namespace and worktree object id). */
    boolean objectIdsComparable(PathIdentity other) {
        return !filesystemNamespace.isEmpty() && filesystemNamespace.equals(other.filesystemNamespace)
                && !worktreeObjectId.isEmpty() && worktreeObjectId.equals(other.worktreeObjectId);
    }

    /** A8 rule 2 for two identities: one worktree under the shared case policy, no contrary ids. */
    boolean sameWorktree(PathIdentity other) {
        boolean sensitive = caseSensitive && other.caseSensitive;
        if (!fold(worktreePath, sensitive).equals(fold(other.worktreePath, sensitive))) {
            return false;
        }
        if (!filesystemNamespace.isEmpty() && !other.filesystemNamespace.isEmpty()
                && !filesystemNamespace.equals(other.filesystemNamespace)) {
            return false;
        }
        return worktreeObjectId.isEmpty() || other.worktreeObjectId.isEmpty()
                || worktreeObjectId.equals(other.worktreeObjectId);
    }

    /**
     * Whether the claims behind two identities contend (A8 rules 1–4), the display scopes given
     * for the "whole worktree" shortcut.
     */
    boolean conflictsWith(PathIdentity other, boolean thisWhole, boolean otherWhole) {
        boolean comparable = objectIdsComparable(other);
        if (!comparable && !sameWorktree(other)) {
            return false;
        }
        if (thisWhole || otherWhole) {
            return true;
        }
        boolean sensitive = caseSensitive && other.caseSensitive;
        for (Row a : rows) {
            for (Row b : other.rows) {
                if (rowsOverlap(a, b, comparable, sensitive)) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * A8 rule 4: the same object (comparable ids, both non-empty and equal) overlaps only by its
     * semantic scope ({@code ""} is the whole object); otherwise by git path or file-system path.
     */
    static boolean rowsOverlap(Row a, Row b, boolean comparable, boolean caseSensitive) {
        if (comparable && !a.objectId().isEmpty() && a.objectId().equals(b.objectId())) {
            return a.objectScope().isEmpty() || b.objectScope().isEmpty() || a.objectScope().equals(b.objectScope());
        }
        return PathNormalizer.overlaps(fold(a.gitPath(), caseSensitive), fold(b.gitPath(), caseSensitive))
                || PathNormalizer.overlaps(fold(a.filesystemPath(), caseSensitive),
                fold(b.filesystemPath(), caseSensitive));
    }

    /**
     * An identity against a legacy claim (A8 rules 2 and 5): one worktree when the legacy label,
     * folded with this identity's policy, is {@link #worktreePath}; the legacy rows are its
     * display paths as both git and file-system path, without object ids.
     */
    boolean conflictsWithLegacy(Scope legacy, boolean thisWhole) {
        if (!fold(legacy.worktree(), caseSensitive).equals(worktreePath)) {
            return false;
        }
        if (thisWhole || legacy.wholeWorktree()) {
            return true;
        }
        for (Row a : rows) {
            for (String p : legacy.paths()) {
                if (rowsOverlap(a, new Row(p, p, "", ""), false, caseSensitive)) {
                    return true;
                }
            }
        }
        return false;
    }
}
