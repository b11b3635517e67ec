package dev.synapsehub.core.claim;

import dev.synapsehub.core.event.ClaimDeniedEvent;
import dev.synapsehub.core.scope.Scope;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** Builds content-minimised {@code claim_denial} evidence: digests, never raw ids or paths. */
final class DenialEvidence {
    static final int MAX_CLAIMANT_CODE_POINTS = 256;

    private DenialEvidence() {
    }

    static ClaimDeniedEvent of(double ts, String claimant, String taskId, Scope scope, String reasonCode) {
        String name = claimant == null ? "" : claimant;
        boolean truncated = name.codePointCount(0, name.length()) > MAX_CLAIMANT_CODE_POINTS;
        String shown = truncated ? name.substring(0, name.offsetByCodePoints(0, MAX_CLAIMANT_CODE_POINTS)) : name;
        return new ClaimDeniedEvent(ts, shown, sha256(name), truncated, scope.paths().size(), reasonCode,
                sha256(scopeJson(scope)), sha256(taskId));
    }

    /** Compact, key-sorted JSON of the scope, non-ASCII kept literal: {"paths":[..],"worktree":..}. */
    static String scopeJson(Scope scope) {
        StringBuilder sb = new StringBuilder("{\"paths\":[");
        for (int i = 0; i < scope.paths().size(); i++) {
            if (i > 0) {
                sb.append(',');
            }
            quote(sb, scope.paths().get(i));
        }
        sb.append("],\"worktree\":");
        quote(sb, scope.worktree());
        return sb.append('}').toString();
    }

    private static void quote(StringBuilder sb, String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                case '\b' -> sb.append("\\b");
                case '\f' -> sb.append("\\f");
                default -> {
                    if (c < 0x20) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        sb.append('"');
    }

    static String sha256(String text) {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            return HexFormat.of().formatHex(digest.digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every JDK", e);
        }
    }
}
