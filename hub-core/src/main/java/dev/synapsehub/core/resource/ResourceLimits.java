package dev.synapsehub.core.resource;

import dev.synapsehub.core.SpecConstants;

/**
 * Bounds on resource offers: offers per agent (a refresh is allowed at the cap) and the
 * time an offer lives without a refresh. Invalid values fall back to the defaults.
 */
public record ResourceLimits(int maxOffersPerAgent, double ttlSeconds) {
    /** 64 offers per agent, DEFAULT_RESOURCE_TTL_SECONDS. */
    public static final ResourceLimits DEFAULTS = new ResourceLimits(64, SpecConstants.DEFAULT_RESOURCE_TTL_SECONDS);

    public ResourceLimits {
        maxOffersPerAgent = Math.max(1, maxOffersPerAgent);
        ttlSeconds = Double.isFinite(ttlSeconds) && ttlSeconds > 0 ? ttlSeconds : SpecConstants.DEFAULT_RESOURCE_TTL_SECONDS;
    }
}
