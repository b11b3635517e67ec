package dev.synapsehub.net.protocol;

import dev.synapsehub.core.messaging.DeadLetter;
import dev.synapsehub.core.state.CoordinationState;

import java.util.List;

/**
 * The state's sizes {@code /metrics} reports (contract §10), read in one pass on the writer:
 * counts, not copies of what is counted (only the dead letters are listed, at most their target cap).
 *
 * @param activeClaims live claims
 * @param resourceOffers live resource offers
 * @param historyMessages chats the history keeps
 * @param boardTasks tasks on the board
 * @param deadLetterTargets targets with dead letters
 * @param deadLetters dead letters over all targets
 */
public record StateCounts(int activeClaims, int resourceOffers, int historyMessages, int boardTasks,
                          int deadLetterTargets, long deadLetters) {

    /** The counts of {@code s} at hub time {@code now} (on the writer: expiry first, as every read does). */
    public static StateCounts of(CoordinationState s, double now) {
        List<DeadLetter> letters = s.messaging().deadLetters(now);
        long total = 0;
        for (DeadLetter d : letters) {
            total += d.count();
        }
        return new StateCounts(s.claims().liveCount(now), s.resources().liveCount(now), s.messaging().historySize(),
                s.board().taskCount(), letters.size(), total);
    }
}
