package dev.synapsehub.core.event;

/**
 * Content-minimised evidence of a refused claim (INV-RR-3): digests of the task id and scope,
 * never the raw id, paths or note. Audit only; replay changes no lease for it.
 */
public record ClaimDeniedEvent(
        double ts,
        String claimant,
        String claimantSha256,
        boolean claimantTruncated,
        int pathCount,
        String reasonCode,
        String scopeSha256,
        String taskIdSha256) implements CoordinationEvent {
    @Override
    public String kind() {
        return "claim_denial";
    }

    @Override
    public Durability durability() {
        return Durability.FULL;
    }
}
