package dev.synapsehub.net.identity;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The operator's identity trust bundle ({@code --identity-trust FILE}, wire contract A2.4's
 * operator-bundle posture): which Ed25519 key each agent name must prove at registration. The
 * file is ours, since the contract gives no format: {@code {"identities": {"<name>": {"key_id":
 * "<id>", "public_key": "<standard base64 of the raw 32-byte key>"}}}}. Names are exact (an
 * {@code -rx} sidecar needs its own entry). Immutable once loaded.
 */
public final class IdentityTrust {
    /** The most names a bundle may hold. */
    public static final int MAX_IDENTITIES = 65_536;

    /** The key one name must prove. */
    public record TrustedKey(String keyId, String publicKey) {
    }

    private final Map<String, TrustedKey> keys;

    public IdentityTrust(Map<String, TrustedKey> keys) {
        this.keys = Map.copyOf(keys);
    }

    /** The key {@code name} must prove, if the bundle names it. */
    public Optional<TrustedKey> keyOf(String name) {
        return Optional.ofNullable(keys.get(name));
    }

    /** How many names the bundle holds. */
    public int size() {
        return keys.size();
    }

    /**
     * Reads a bundle file.
     *
     * @throws IllegalArgumentException with an operator-facing message when the file is unreadable
     *         or any entry is malformed: the hub refuses to start rather than admit on a guess
     */
    public static IdentityTrust load(Path file) {
        String where = "--identity-trust " + file;
        JsonNode root;
        try {
            root = new ObjectMapper().readTree(Files.readAllBytes(file));
        } catch (IOException e) {
            throw new IllegalArgumentException(where + ": cannot read it as JSON: " + e.getMessage(), e);
        }
        if (root == null || !root.isObject() || root.size() != 1 || !root.path("identities").isObject()) {
            throw new IllegalArgumentException(where + ": expected {\"identities\": {\"<name>\": {\"key_id\": ..., "
                    + "\"public_key\": ...}}}");
        }
        JsonNode identities = root.get("identities");
        if (identities.size() > MAX_IDENTITIES) {
            throw new IllegalArgumentException(where + ": more than " + MAX_IDENTITIES + " identities");
        }
        Map<String, TrustedKey> keys = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = identities.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            String name = e.getKey();
            JsonNode entry = e.getValue();
            String at = where + ": identity '" + name + "'";
            if (name.isBlank() || !name.equals(name.strip())) {
                throw new IllegalArgumentException(at + ": a name is non-blank and has no surrounding spaces");
            }
            if (!entry.isObject()) {
                throw new IllegalArgumentException(at + " is not an object");
            }
            for (Iterator<String> members = entry.fieldNames(); members.hasNext(); ) {
                String member = members.next();
                if (!member.equals("key_id") && !member.equals("public_key")) {
                    throw new IllegalArgumentException(at + ": unknown member '" + member + "'");
                }
            }
            JsonNode keyId = entry.get("key_id");
            if (keyId == null || !keyId.isTextual() || keyId.textValue().isEmpty()) {
                throw new IllegalArgumentException(at + ": key_id must be a non-empty string");
            }
            JsonNode publicKey = entry.get("public_key");
            if (publicKey == null || !publicKey.isTextual() || Ed25519.rawPublicKey(publicKey.textValue()) == null) {
                throw new IllegalArgumentException(at + ": public_key must be the standard base64 of a raw 32-byte "
                        + "Ed25519 key");
            }
            keys.put(name, new TrustedKey(keyId.textValue(), publicKey.textValue()));
        }
        return new IdentityTrust(keys);
    }
}
