package dev.synapsehub.net.identity;

import java.util.Objects;

/**
 * Identity pinning on this hub (wire contract A2): trust on first use unless
 * {@code --no-identity-pinning}, or the operator-bundle posture.
 *
 * @param enabled registrations are checked against pins and valid first-use proofs pin
 * @param pinStore where pins are kept, as the pin-mismatch refusal names it: the journal path
 *        with {@code --db}, or null when pins live in memory only
 * @param acl the reclaim grants of {@code --acl-policy}
 * @param trust the operator's bundle ({@code --require-identity-binding --identity-trust FILE}):
 *        every first frame must prove the bundle's key for its name, and pins are neither
 *        checked nor made; null for trust on first use
 */
public record IdentityPinSettings(boolean enabled, String pinStore, PinReclaimAcl acl, IdentityTrust trust) {
    /** Pinning off, no grants. */
    public static final IdentityPinSettings OFF = new IdentityPinSettings(false, null, PinReclaimAcl.NONE);

    public IdentityPinSettings {
        Objects.requireNonNull(acl, "acl");
    }

    /** Trust on first use (or off), without an operator bundle. */
    public IdentityPinSettings(boolean enabled, String pinStore, PinReclaimAcl acl) {
        this(enabled, pinStore, acl, null);
    }

    /** True in the operator-bundle posture. */
    public boolean requiresBinding() {
        return trust != null;
    }
}
