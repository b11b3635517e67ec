package dev.synapsehub.core.messaging;

/**
 * Bounds of the messaging state (wire contract §4.4), re-applied on replay (INV-RR-2).
 * Caps below one are raised to one; invalid ages fall back to seven days.
 *
 * @param maxHistory retained chats ({@code --max-history})
 * @param deadLetterTargets dead-letter ledger entries
 * @param deadLetterMaxAgeSeconds entries idle longer are forgotten
 * @param escalationThreshold every N-th dead letter to a target escalates; 0 disables
 * @param mailboxIdentities identities in the pending projection (LRU)
 * @param maxPendingPerIdentity pending seqs remembered per identity (oldest dropped)
 * @param maxWatermarks identities whose watermark is remembered (LRU)
 * @param pendingReceipts pending deferred receipts (oldest evicted as expired)
 */
public record MessagingLimits(int maxHistory, int deadLetterTargets, double deadLetterMaxAgeSeconds,
        int escalationThreshold, int mailboxIdentities, int maxPendingPerIdentity, int maxWatermarks,
        int pendingReceipts) {
    /** Seven days, in seconds. */
    public static final double SEVEN_DAYS = 7 * 24 * 3600.0;

    /** The contract defaults; escalation off as in the CLI. */
    public static final MessagingLimits DEFAULTS =
            new MessagingLimits(10_000, 200, SEVEN_DAYS, 0, 512, 10_000, 100_000, 1024);

    public MessagingLimits {
        maxHistory = Math.max(1, maxHistory);
        deadLetterTargets = Math.max(1, deadLetterTargets);
        deadLetterMaxAgeSeconds = Double.isFinite(deadLetterMaxAgeSeconds) && deadLetterMaxAgeSeconds > 0
                ? deadLetterMaxAgeSeconds : SEVEN_DAYS;
        escalationThreshold = Math.max(0, escalationThreshold);
        mailboxIdentities = Math.max(1, mailboxIdentities);
        maxPendingPerIdentity = Math.max(1, maxPendingPerIdentity);
        maxWatermarks = Math.max(1, maxWatermarks);
        pendingReceipts = Math.max(1, pendingReceipts);
    }

    /** A copy with another history bound. */
    public MessagingLimits withMaxHistory(int n) {
        return new MessagingLimits(n, deadLetterTargets, deadLetterMaxAgeSeconds, escalationThreshold,
                mailboxIdentities, maxPendingPerIdentity, maxWatermarks, pendingReceipts);
    }

    /** A copy with another escalation threshold. */
    public MessagingLimits withEscalationThreshold(int n) {
        return new MessagingLimits(maxHistory, deadLetterTargets, deadLetterMaxAgeSeconds, n,
                mailboxIdentities, maxPendingPerIdentity, maxWatermarks, pendingReceipts);
    }
}
