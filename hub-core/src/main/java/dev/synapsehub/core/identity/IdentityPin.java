package dev.synapsehub.core.identity;

import java.util.Objects;

/**
 * A name bound to an Ed25519 key on first use (wire contract A2). Pins never expire; only an
 * operator's reclaim removes one.
 *
 * @param name the exact agent name pinned ({@code X-rx} is independent of {@code X})
 * @param keyId the {@code signature.key_id} of the first valid proof
 * @param publicKey the standard base64 text of the 32-byte raw public key, as presented
 * @param pinnedAt hub time of the pin, Unix seconds
 */
public record IdentityPin(String name, String keyId, String publicKey, double pinnedAt) {
    public IdentityPin {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(keyId, "keyId");
        Objects.requireNonNull(publicKey, "publicKey");
        if (name.isEmpty() || keyId.isEmpty() || publicKey.isEmpty()) {
            throw new IllegalArgumentException("a pin needs a name, a key id and a public key");
        }
    }
}
