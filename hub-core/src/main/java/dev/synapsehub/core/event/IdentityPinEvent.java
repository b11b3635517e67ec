package dev.synapsehub.core.event;

import java.util.Objects;

/**
 * A name was pinned to a key, or its pin was removed by an operator's reclaim (ours: kind
 * {@code identity_pin}; the reference keeps pins in a file, we journal them so they survive a
 * restart with the rest of the state and come back identically on replay).
 *
 * @param op what happened
 * @param name the pinned name
 * @param keyId the key id pinned (for an unpin: the key id removed)
 * @param publicKey the base64 public key pinned (for an unpin: the key removed)
 */
public record IdentityPinEvent(double ts, Op op, String name, String keyId, String publicKey)
        implements CoordinationEvent {
    /** Pin or unpin. */
    public enum Op { PIN, UNPIN }

    public IdentityPinEvent {
        Objects.requireNonNull(op, "op");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(keyId, "keyId");
        Objects.requireNonNull(publicKey, "publicKey");
    }

    @Override
    public String kind() {
        return "identity_pin";
    }

    @Override
    public Durability durability() {
        return Durability.FULL; // a name's protection must survive an OS crash like a claim
    }
}
