package dev.synapsehub.net.identity;

import java.util.Objects;

/**
 * Identity pinning on this hub (wire contract A2): off unless {@code --identity-pinning}.
 *
 * @param enabled registrations are checked against pins and valid first-use proofs pin
 * @param pinStore where pins are kept, as the pin-mismatch refusal names it: the journal path
 *        with {@code --db}, or null when pins live in memory only
 * @param acl the reclaim grants of {@code --acl-policy}
 */
public record IdentityPinSettings(boolean enabled, String pinStore, PinReclaimAcl acl) {
    /** Pinning off, no grants. */
    public static final IdentityPinSettings OFF = new IdentityPinSettings(false, null, PinReclaimAcl.NONE);

    public IdentityPinSettings {
        Objects.requireNonNull(acl, "acl");
    }
}
