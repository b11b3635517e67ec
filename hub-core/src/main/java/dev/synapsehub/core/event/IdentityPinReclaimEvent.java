package dev.synapsehub.core.event;

import java.util.Objects;

/**
 * The mandatory audit record of an identity-pin reclaim (contract A2.6, §12.3 kind
 * {@code identity_pin_reclaim}): one with status {@code approved}, then one with status
 * {@code applied}. Audit only: it never changes state, live or on replay (seed INV-RR-3); the
 * pin itself is removed by the {@link IdentityPinEvent} journaled between the two.
 *
 * @param operator the requester
 * @param operatorKeyId the key id the operator's own name is pinned to
 * @param approvedSeq the approval's journal seq (applied only, else null)
 * @param evictedLiveSocket a live holder's socket was closed 4017 (applied only, else null)
 */
public record IdentityPinReclaimEvent(double ts, String operator, String operatorKeyId, String pinName,
        String expectedKeyId, String reason, boolean breakGlass, boolean ownerOnline, boolean leaseLive,
        boolean staleOwnerReclaimable, String status, boolean applied, Long approvedSeq, Boolean evictedLiveSocket)
        implements CoordinationEvent {

    public IdentityPinReclaimEvent {
        Objects.requireNonNull(operator, "operator");
        Objects.requireNonNull(operatorKeyId, "operatorKeyId");
        Objects.requireNonNull(pinName, "pinName");
        Objects.requireNonNull(expectedKeyId, "expectedKeyId");
        Objects.requireNonNull(reason, "reason");
        if (!"approved".equals(status) && !"applied".equals(status)) {
            throw new IllegalArgumentException("reclaim status is approved or applied: " + status);
        }
        if (applied != "applied".equals(status) || applied != (approvedSeq != null)
                || applied != (evictedLiveSocket != null)) {
            throw new IllegalArgumentException("only an applied record carries approved_seq and evicted_live_socket");
        }
    }

    @Override
    public String kind() {
        return "identity_pin_reclaim";
    }

    @Override
    public Durability durability() {
        return Durability.FULL;
    }
}
