package dev.synapsehub.federation.trust;

import java.util.List;

/**
 * One peer domain in the federation store (contract F2): what it may address, the client
 * certificate pins and signing key labels it is known by, expiry, revocation and provenance
 * (null for a bundle not yet imported).
 */
public record PeeringRecord(String domainId, List<String> namespaces, List<String> certificatePins,
                            List<String> signingKeyIds, List<ScopeGrant> scopeGrants, Double expiresAt,
                            boolean revoked, Provenance provenance) {
    public PeeringRecord {
        namespaces = List.copyOf(namespaces);
        certificatePins = List.copyOf(certificatePins);
        signingKeyIds = List.copyOf(signingKeyIds);
        scopeGrants = List.copyOf(scopeGrants);
    }

    /** True when the peering is expired at {@code now} (epoch seconds): now ≥ expires_at. */
    public boolean expiredAt(double now) {
        return expiresAt != null && now >= expiresAt;
    }

    /** The state {@code federation list} prints. */
    public String state(double now) {
        return revoked ? "revoked" : expiredAt(now) ? "expired" : "active";
    }

    /** This record revoked (kept in the store; authorises nothing). */
    public PeeringRecord revokedCopy() {
        return new PeeringRecord(domainId, namespaces, certificatePins, signingKeyIds, scopeGrants, expiresAt, true,
                provenance);
    }

    /** This bundle with {@code p} as its provenance. */
    public PeeringRecord withProvenance(Provenance p) {
        return new PeeringRecord(domainId, namespaces, certificatePins, signingKeyIds, scopeGrants, expiresAt, revoked, p);
    }
}
