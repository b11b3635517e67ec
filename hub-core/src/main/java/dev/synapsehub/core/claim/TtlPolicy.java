package dev.synapsehub.core.claim;

import dev.synapsehub.core.SpecConstants;

/** INV-LL-3: every TTL is clamped into [MINIMUM_TTL_SECONDS, MAXIMUM_TTL_SECONDS]. */
public final class TtlPolicy {
    private TtlPolicy() {
    }

    /** The effective TTL for a request: absent or non-finite falls back to the default. */
    public static double effective(Double requested, double defaultTtl) {
        if (requested == null || !Double.isFinite(requested)) {
            return clampIntoWindow(defaultTtl);
        }
        return clampIntoWindow(requested);
    }

    /** Clamps a finite TTL into the spec window. */
    public static double clampIntoWindow(double ttl) {
        return Math.min(SpecConstants.MAXIMUM_TTL_SECONDS, Math.max(SpecConstants.MINIMUM_TTL_SECONDS, ttl));
    }
}
