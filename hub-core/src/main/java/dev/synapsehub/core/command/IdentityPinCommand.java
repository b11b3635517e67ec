package dev.synapsehub.core.command;

import java.util.Objects;

/**
 * Identity pinning (wire contract A2), decided on the writer thread so that two sockets racing
 * for one unpinned name see one pin: a first-use {@link Pin}, and an operator's {@link Reclaim}.
 */
public sealed interface IdentityPinCommand extends Command {

    /**
     * Pin {@code agent} to a key whose proof the edge verified, after its name bound (A10.3).
     *
     * @param keyId the proof's {@code key_id}
     * @param publicKey the presented {@code identity_public_key} (standard base64)
     */
    record Pin(String agent, String keyId, String publicKey) implements IdentityPinCommand {
        public Pin {
            Objects.requireNonNull(agent, "agent");
            Objects.requireNonNull(keyId, "keyId");
            Objects.requireNonNull(publicKey, "publicKey");
        }
    }

    /**
     * An operator's {@code identity_pin_reclaim} that passed the edge's checks (A2.6 1–8, 11, 12);
     * the writer re-checks what depends on pins (7, 9, 10) and, when they hold, journals the
     * approval, the removal and the application in one batch.
     *
     * @param agent the operator (the requester's bound name)
     * @param pinName the trimmed name to reclaim
     * @param expectedKeyId the trimmed key id the operator inspected
     * @param reason the operator's reason (at most 500 characters)
     * @param breakGlass the request's {@code break_glass} was literally {@code true}
     * @param ownerOnline the pinned name was bound to a live socket when checked
     * @param leaseLive the name had a live ownership lease when checked
     * @param staleOwnerReclaimable the online holder had not reacted for long enough to be waived
     * @param boundKeyId the key the operator's registration proved when the hub runs the
     *        operator-bundle posture (A2.6 check 7 then holds without the operator's own pin), else null
     */
    record Reclaim(String agent, String pinName, String expectedKeyId, String reason, boolean breakGlass,
            boolean ownerOnline, boolean leaseLive, boolean staleOwnerReclaimable, String boundKeyId)
            implements IdentityPinCommand {
        public Reclaim {
            Objects.requireNonNull(agent, "agent");
            Objects.requireNonNull(pinName, "pinName");
            Objects.requireNonNull(expectedKeyId, "expectedKeyId");
            Objects.requireNonNull(reason, "reason");
        }

        /** A reclaim by an operator whose own name must be pinned (trust on first use). */
        public Reclaim(String agent, String pinName, String expectedKeyId, String reason, boolean breakGlass,
                boolean ownerOnline, boolean leaseLive, boolean staleOwnerReclaimable) {
            this(agent, pinName, expectedKeyId, reason, breakGlass, ownerOnline, leaseLive, staleOwnerReclaimable, null);
        }
    }
}
