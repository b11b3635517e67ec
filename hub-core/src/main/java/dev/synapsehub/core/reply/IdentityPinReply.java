package dev.synapsehub.core.reply;

import dev.synapsehub.core.identity.IdentityPin;

/**
 * The writer's answer to an {@code IdentityPinCommand}.
 *
 * @param outcome what was decided
 * @param pin the pin concerned: the new or existing pin of a {@code Pin}, the removed pin of a
 *        reclaim; null when there is none
 * @param message the reclaim's result text (contract A2.6), else empty
 * @param auditSeq the journal seq of the reclaim's {@code applied} record, else 0
 */
public record IdentityPinReply(Outcome outcome, IdentityPin pin, String message, long auditSeq) implements Reply {
    /** What a pin or reclaim command came to. */
    public enum Outcome {
        /** The name is now pinned to the presented key. */
        PINNED,
        /** The name was already pinned to this very key: nothing changed. */
        ALREADY_PINNED,
        /** The name got pinned to another key first: the registration must be refused. */
        MISMATCH,
        /** The pin store is full: nothing pinned. */
        STORE_FULL,
        /** The reclaim removed the pin. */
        RECLAIMED,
        /** The reclaim was refused; {@code message} says why. */
        RECLAIM_REFUSED
    }

    public IdentityPinReply {
        message = message == null ? "" : message;
    }
}
