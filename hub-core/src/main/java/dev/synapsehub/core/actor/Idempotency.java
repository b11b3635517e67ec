package dev.synapsehub.core.actor;

import dev.synapsehub.core.PythonWhitespace;

import java.util.Objects;

/**
 * The apply-once part of a keyed mutation (INV-CR-1).
 *
 * @param key namespaced by sender and verb: see {@link #key(String, String, String)}
 * @param requestDigest SHA-256 hex of the canonical request; a reuse with another digest conflicts
 * @param renderer renders the first response, which is stored and replayed verbatim
 */
public record Idempotency(String key, String requestDigest, ResponseRenderer renderer) {
    public Idempotency {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(requestDigest, "requestDigest");
        Objects.requireNonNull(renderer, "renderer");
    }

    /** The ledger key: sender NUL verb NUL raw key, so keys never collide across agents or verbs. */
    public static String key(String sender, String verb, String rawKey) {
        return PythonWhitespace.strip(sender) + '\0' + PythonWhitespace.strip(verb).toLowerCase(java.util.Locale.ROOT) + '\0' + rawKey;
    }
}
