package dev.synapsehub.net.identity;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.synapsehub.core.messaging.ShellPattern;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The {@code identity-pin-reclaim} grants of an {@code --acl-policy} file (wire contract A2.6,
 * check 6). A rule {@code {"permission": "identity-pin-reclaim", "target_kind": "agent",
 * "target_pattern": <glob on pin_name>, "namespace"?: <requester's project>}} lets an operator
 * reclaim the pins its pattern matches; with {@code namespace}, only operators of that project
 * ({@code <project>/<seat>}) may. The file is {@code {"rules": [...]}} (or the bare array);
 * rules for other permissions are kept out of this hub's decisions (it has no other ACL layer).
 */
public final class PinReclaimAcl {
    /** The permission this hub reads. */
    public static final String PERMISSION = "identity-pin-reclaim";

    /** One grant: {@code namespace} null when any project may use it. */
    public record Grant(String targetPattern, String namespace) {
    }

    /** No file: nothing is ever granted. */
    public static final PinReclaimAcl NONE = new PinReclaimAcl(List.of());

    private final List<Grant> grants;

    public PinReclaimAcl(List<Grant> grants) {
        this.grants = List.copyOf(grants);
    }

    /** The grants held. */
    public List<Grant> grants() {
        return grants;
    }

    /** True when a grant authorises {@code operator} to reclaim {@code pinName}. */
    public boolean allows(String operator, String pinName) {
        int slash = operator.indexOf('/');
        String project = slash > 0 ? operator.substring(0, slash) : null;
        for (Grant g : grants) {
            if ((g.namespace() == null || g.namespace().equals(project)) && ShellPattern.matches(g.targetPattern(), pinName)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Reads an ACL policy file.
     *
     * @throws IllegalArgumentException with an operator-facing message when the file is unreadable
     *         or a reclaim rule is malformed (the hub refuses to start rather than guess)
     */
    public static PinReclaimAcl load(Path file) {
        JsonNode root;
        try {
            root = new ObjectMapper().readTree(Files.readAllBytes(file));
        } catch (IOException e) {
            throw new IllegalArgumentException("--acl-policy " + file + ": cannot read it as JSON: " + e.getMessage(), e);
        }
        JsonNode rules = root != null && root.isObject() ? root.get("rules") : root;
        if (rules == null || !rules.isArray()) {
            throw new IllegalArgumentException("--acl-policy " + file + ": expected {\"rules\": [...]} or an array of rules");
        }
        List<Grant> out = new ArrayList<>();
        int i = 0;
        for (JsonNode rule : rules) {
            String where = "--acl-policy " + file + ": rule " + i++;
            if (!rule.isObject()) {
                throw new IllegalArgumentException(where + " is not an object");
            }
            JsonNode permission = rule.get("permission");
            if (permission == null || !permission.isTextual()) {
                throw new IllegalArgumentException(where + " has no string 'permission'");
            }
            if (!PERMISSION.equals(permission.textValue())) {
                continue;
            }
            JsonNode kind = rule.get("target_kind");
            JsonNode pattern = rule.get("target_pattern");
            JsonNode namespace = rule.get("namespace");
            if (kind == null || !"agent".equals(kind.asText(null)) || !kind.isTextual()) {
                throw new IllegalArgumentException(where + ": an identity-pin-reclaim rule needs \"target_kind\": \"agent\"");
            }
            if (pattern == null || !pattern.isTextual() || pattern.textValue().isBlank()) {
                throw new IllegalArgumentException(where + ": an identity-pin-reclaim rule needs a non-blank 'target_pattern'");
            }
            if (namespace != null && !namespace.isNull() && (!namespace.isTextual() || namespace.textValue().isBlank())) {
                throw new IllegalArgumentException(where + ": 'namespace' must be a non-blank string when present");
            }
            out.add(new Grant(pattern.textValue(), namespace == null || namespace.isNull() ? null : namespace.textValue()));
        }
        return new PinReclaimAcl(out);
    }
}
