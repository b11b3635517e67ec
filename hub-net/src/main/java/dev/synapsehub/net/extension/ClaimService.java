package dev.synapsehub.net.extension;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.net.protocol.Request;

/** The hub's claim path, offered to extensions that decide claims on behalf of another hub's agents. */
public interface ClaimService {
    /** The outcome of a claim decided on behalf of another hub, delivered on the outbox thread. */
    @FunctionalInterface
    interface Answer {
        /**
         * @param granted true when the claimant holds the task afterwards
         * @param grant the {@code claim_granted} frame as published (or as first published, for
         *     a keyed retry), null when refused
         * @param message the hub's text (the grant's or the refusal's payload)
         */
        void answer(boolean granted, ObjectNode grant, String message);
    }

    /**
     * Decides {@code claim} (a {@code claim} frame whose {@code sender} is the claimant) with the
     * same parsing and rules as a local claim, charged to {@code principal}. An {@code idem_key}
     * in the frame is kept in a ledger scope of its own ({@code ledgerScope}), so a retry is
     * answered from the ledger and never grants twice. An unkeyed claim whose claimant already
     * holds the task live under {@code principal} is answered with that grant as it stands (same
     * epoch, nothing renewed, journaled or broadcast), so an unkeyed retry never renews twice. A new
     * grant or renewal is broadcast like any local grant; the requester's socket gets nothing else:
     * {@code answer} tells the outcome.
     */
    void claimOnBehalf(Request claim, String principal, String ledgerScope, Answer answer);

    /**
     * Answers a keyed {@code claim} (as {@link #claimOnBehalf} would take it) from the idempotency
     * ledger of {@code ledgerScope}, without deciding anything: its first answer when the key is
     * remembered for the same request, the idempotency conflict for another. True when it answered;
     * false (nothing answered) when the frame is not keyed or the key is not remembered. So a keyed
     * retry is answered before any check of the present moment (ownership, partition, busy).
     */
    boolean answerIfKeyed(Request claim, String ledgerScope, Answer answer);
}
