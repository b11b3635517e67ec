package dev.synapsehub.core.messaging;

/**
 * How many targets have dead letters, and how many letters in all (a count for {@code /metrics},
 * without the listing {@code state_snapshot} sorts).
 *
 * @param targets targets with dead letters
 * @param letters dead letters over all targets
 */
public record DeadLetterTally(int targets, long letters) {
}
