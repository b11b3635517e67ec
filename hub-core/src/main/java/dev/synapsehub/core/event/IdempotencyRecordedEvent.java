package dev.synapsehub.core.event;

/**
 * The stored first response of a keyed mutation (INV-CR-1), committed with the mutation.
 *
 * @param key sender NUL verb NUL idem_key
 * @param requestDigest SHA-256 hex of the canonical request
 * @param response the exact response frame, opaque to the core
 */
public record IdempotencyRecordedEvent(double ts, String key, String requestDigest, String response)
        implements CoordinationEvent {
    @Override
    public String kind() {
        return "idempotency";
    }

    @Override
    public Durability durability() {
        return Durability.FULL;
    }
}
