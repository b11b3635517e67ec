package dev.synapsehub.federation.trust;

/**
 * The serving side's verdict on one peer request (contract F5): allowed with its grant, or
 * refused with a reason that goes to the hub log only, never onto the wire.
 */
public record PeerDecision(boolean allowed, String reason, ServingGrant grant) {
    /** Allowed under {@code grant}. */
    public static PeerDecision allow(ServingGrant grant) {
        return new PeerDecision(true, "", grant);
    }

    /** Refused for {@code reason}. */
    public static PeerDecision refuse(String reason) {
        return new PeerDecision(false, reason, null);
    }
}
