package dev.synapsehub.core.claim;

import dev.synapsehub.core.SpecConstants;

/**
 * The registry's configurable bounds, validated once: caps below one are raised to one and
 * non-finite or out-of-window values fall back to the spec defaults.
 */
public record RegistryLimits(
        double defaultTtlSeconds,
        int maxClaimsPerPrincipal,
        int maxDeclaredPaths,
        int maxRetainedCheckpoints) {

    /** The spec defaults. */
    public static final RegistryLimits DEFAULTS = new RegistryLimits(
            SpecConstants.DEFAULT_LEASE_TTL_SECONDS, SpecConstants.MAX_CLAIMS_PER_AGENT,
            SpecConstants.MAX_DECLARED_PATHS, 100_000);

    public RegistryLimits {
        defaultTtlSeconds = Double.isFinite(defaultTtlSeconds)
                ? TtlPolicy.clampIntoWindow(defaultTtlSeconds)
                : SpecConstants.DEFAULT_LEASE_TTL_SECONDS;
        maxClaimsPerPrincipal = Math.max(1, maxClaimsPerPrincipal);
        maxDeclaredPaths = Math.max(1, maxDeclaredPaths);
        maxRetainedCheckpoints = Math.max(1, maxRetainedCheckpoints);
    }

    /** A copy with another claim cap (the model uses a small one so INV-ME-5 is reached). */
    public RegistryLimits withMaxClaimsPerPrincipal(int cap) {
        return new RegistryLimits(defaultTtlSeconds, cap, maxDeclaredPaths, maxRetainedCheckpoints);
    }

    /** A copy with another default TTL. */
    public RegistryLimits withDefaultTtlSeconds(double ttl) {
        return new RegistryLimits(ttl, maxClaimsPerPrincipal, maxDeclaredPaths, maxRetainedCheckpoints);
    }

    /** A copy with another declared-path cap. */
    public RegistryLimits withMaxDeclaredPaths(int cap) {
        return new RegistryLimits(defaultTtlSeconds, maxClaimsPerPrincipal, cap, maxRetainedCheckpoints);
    }
}
