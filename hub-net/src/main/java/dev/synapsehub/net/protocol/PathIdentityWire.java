package dev.synapsehub.net.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.scope.PathIdentity;
import dev.synapsehub.core.scope.PathNormalizer;

import java.text.Normalizer;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * A claim's {@code path_identity} member on the wire (contract §7.7, A8): its shape checked
 * strictly, and its echo (every path row with {@code object_id} and {@code object_scope}).
 * Alignment with the display scope is the writer's check ({@link PathIdentity#alignsWith}).
 */
final class PathIdentityWire {
    /** Worktree object ids, file-system namespaces and object ids: empty or up to 160 of these. */
    private static final Pattern ID = Pattern.compile("[A-Za-z0-9_.:-]{0,160}");
    private static final Pattern DRIVE = Pattern.compile("^[A-Za-z]:.*");
    private static final String SYMBOL = "/.synapse-symbol/";
    private static final int MAX_PATH = 4096;

    /** The member's value: absent, a valid identity, or invalid. */
    record Parsed(boolean invalid, PathIdentity identity) {
        static final Parsed ABSENT = new Parsed(false, null);
        static final Parsed INVALID = new Parsed(true, null);
    }

    private PathIdentityWire() {
    }

    /** Parses {@code path_identity} (absent or null: none). */
    static Parsed parse(JsonNode n) {
        if (n == null || n.isNull()) {
            return Parsed.ABSENT;
        }
        if (!n.isObject()) {
            return Parsed.INVALID;
        }
        JsonNode version = n.get("version");
        if (version == null || !version.isIntegralNumber() || version.bigIntegerValue().intValue() != 1
                || version.bigIntegerValue().bitLength() > 31) {
            return Parsed.INVALID;
        }
        JsonNode cs = n.get("case_sensitive");
        if (cs == null || !cs.isBoolean()) {
            return Parsed.INVALID;
        }
        boolean caseSensitive = cs.booleanValue();
        String worktree = text(n.get("worktree_path"));
        if (worktree == null || worktree.isEmpty() || !canonicalWorktree(worktree, caseSensitive)) {
            return Parsed.INVALID;
        }
        String wtId = optionalId(n.get("worktree_object_id"));
        String ns = optionalId(n.get("filesystem_namespace"));
        JsonNode paths = n.get("paths");
        if (wtId == null || ns == null || paths == null || !paths.isArray()) {
            return Parsed.INVALID;
        }
        List<PathIdentity.Row> rows = new ArrayList<>();
        for (JsonNode p : paths) {
            if (!p.isObject()) {
                return Parsed.INVALID;
            }
            String git = text(p.get("git_path"));
            String fs = text(p.get("filesystem_path"));
            String objectId = optionalId(p.get("object_id"));
            JsonNode scopeNode = p.get("object_scope");
            String scope = scopeNode == null || scopeNode.isNull() ? "" : text(scopeNode);
            if (git == null || git.isEmpty() || !pathText(git) || !PathNormalizer.normalize(git).equals(git)
                    || fs == null || !pathText(fs) || objectId == null || scope == null) {
                return Parsed.INVALID;
            }
            int marker = git.indexOf(SYMBOL);
            // a semantic scope only on a semantic path, and exactly its encoded suffix
            if (!scope.isEmpty() && (marker < 0 || !git.substring(marker + SYMBOL.length()).equals(scope))) {
                return Parsed.INVALID;
            }
            rows.add(new PathIdentity.Row(git, fs, objectId, scope));
        }
        return new Parsed(false, new PathIdentity(worktree, wtId, ns, caseSensitive, rows));
    }

    /** The echo: the identity as stored, every row with {@code object_id} and {@code object_scope}. */
    static void write(ObjectNode frame, PathIdentity id) {
        if (id == null) {
            return;
        }
        ObjectNode o = frame.putObject("path_identity");
        o.put("version", 1);
        o.put("worktree_path", id.worktreePath());
        o.put("worktree_object_id", id.worktreeObjectId());
        o.put("filesystem_namespace", id.filesystemNamespace());
        o.put("case_sensitive", id.caseSensitive());
        ArrayNode rows = o.putArray("paths");
        for (PathIdentity.Row r : id.rows()) {
            rows.addObject().put("git_path", r.gitPath()).put("filesystem_path", r.filesystemPath())
                    .put("object_id", r.objectId()).put("object_scope", r.objectScope());
        }
    }

    /** NFC, forward slashes for a drive path, no trailing '/' but the root's, folded when case-insensitive. */
    private static boolean canonicalWorktree(String w, boolean caseSensitive) {
        if (!pathText(w) || !Normalizer.isNormalized(w, Normalizer.Form.NFC)) {
            return false;
        }
        if (DRIVE.matcher(w).matches() && w.indexOf('\\') >= 0) {
            return false;
        }
        boolean root = w.equals("/") || (w.length() == 3 && DRIVE.matcher(w).matches() && w.endsWith(":/"));
        if (w.endsWith("/") && !root) {
            return false;
        }
        return PathIdentity.fold(w, caseSensitive).equals(w);
    }

    private static boolean pathText(String s) {
        return s.codePointCount(0, s.length()) <= MAX_PATH && PathNormalizer.isPrintable(s);
    }

    private static String text(JsonNode n) {
        return n != null && n.isTextual() ? n.textValue() : null;
    }

    /** An optional id: absent or null is {@code ""}; null (invalid) when not an id. */
    private static String optionalId(JsonNode n) {
        if (n == null || n.isNull()) {
            return "";
        }
        return n.isTextual() && ID.matcher(n.textValue()).matches() ? n.textValue() : null;
    }
}
