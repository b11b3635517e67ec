package dev.synapsehub.journal;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.synapsehub.core.scope.PathIdentity;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * A claim's {@code path_identity} in the journal (contract §7.7, A8), in its wire shape:
 * {@code version} 1, {@code worktree_path}, {@code worktree_object_id},
 * {@code filesystem_namespace}, {@code case_sensitive}, {@code paths} of {@code {git_path,
 * filesystem_path, object_id, object_scope}}. Decoding is lenient: a member of another shape
 * (an imported row) leaves the claim without an identity, as it was before identities were kept.
 */
final class PathIdentityCodec {
    private PathIdentityCodec() {
    }

    static void write(JsonGenerator g, PathIdentity id) throws IOException {
        g.writeFieldName("path_identity");
        g.writeStartObject();
        g.writeNumberField("version", 1);
        g.writeStringField("worktree_path", id.worktreePath());
        g.writeStringField("worktree_object_id", id.worktreeObjectId());
        g.writeStringField("filesystem_namespace", id.filesystemNamespace());
        g.writeBooleanField("case_sensitive", id.caseSensitive());
        g.writeFieldName("paths");
        g.writeStartArray();
        for (PathIdentity.Row r : id.rows()) {
            g.writeStartObject();
            g.writeStringField("git_path", r.gitPath());
            g.writeStringField("filesystem_path", r.filesystemPath());
            g.writeStringField("object_id", r.objectId());
            g.writeStringField("object_scope", r.objectScope());
            g.writeEndObject();
        }
        g.writeEndArray();
        g.writeEndObject();
    }

    /** The identity of a claim payload, or null (absent, or not in our shape). */
    static PathIdentity read(PayloadReader claim) {
        try {
            PayloadReader o = claim.isObject("path_identity") ? claim.object("path_identity") : null;
            if (o == null || o.integer("version", 0) != 1) {
                return null;
            }
            List<PayloadReader> rows = o.objects("paths");
            String worktree = o.nullableText("worktree_path");
            if (rows == null || worktree == null || !o.has("case_sensitive")) {
                return null;
            }
            List<PathIdentity.Row> out = new ArrayList<>(rows.size());
            for (PayloadReader r : rows) {
                String git = r.nullableText("git_path");
                if (git == null) {
                    return null;
                }
                out.add(new PathIdentity.Row(git, r.text("filesystem_path", ""), r.text("object_id", ""),
                        r.text("object_scope", "")));
            }
            return new PathIdentity(worktree, o.text("worktree_object_id", ""), o.text("filesystem_namespace", ""),
                    o.bool("case_sensitive", true), out);
        } catch (EventCodec.CorruptPayloadException | RuntimeException otherShape) {
            return null;
        }
    }
}
