package dev.synapsehub.net.protocol;

import dev.synapsehub.core.messaging.DeadLetterTally;
import dev.synapsehub.core.state.CoordinationState;

/**
 * The state's sizes {@code /metrics} reports (contract §10), read in one pass on the writer:
 * counts, never copies of what is counted.
 *
 * @param activeClaims live claims
 * @param resourceOffers live resource offers
 * @param historyMessages chats the history keeps
 * @param boardTasks tasks on the board
 * @param deadLetterTargets targets with dead letters
 * @param deadLetters dead letters over all targets
 * @param mailboxDroppedWithPending mailbox identities its bound dropped while chats to them were
 *        pending, in the events this state applied since it was built (from a snapshot: since it)
 */
public record StateCounts(int activeClaims, int resourceOffers, int historyMessages, int boardTasks,
                          int deadLetterTargets, long deadLetters, long mailboxDroppedWithPending) {

    /** The counts of {@code s} at hub time {@code now} (on the writer: expiry first, as every read does). */
    public static StateCounts of(CoordinationState s, double now) {
        DeadLetterTally letters = s.messaging().deadLetterTally(now);
        return new StateCounts(s.claims().liveCount(now), s.resources().liveCount(now), s.messaging().historySize(),
                s.board().taskCount(), letters.targets(), letters.letters(),
                s.messaging().mailboxDroppedWithPending());
    }
}
