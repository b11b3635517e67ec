package dev.synapsehub.federation.route;

/** The ownership outcome of one claimant's namespace, with its owner (null when ungoverned). */
public record Resolution(Ownership ownership, String namespace, String ownerHubId) {
}
