package dev.synapsehub.federation.follow;

import java.time.Duration;

/**
 * How much one poll of one peer may do before it commits and yields: pages, events and time.
 * A backlog larger than one poll is caught up in resumable steps, each committed.
 */
public record PollBudget(int pages, long events, Duration time) {
    /** 100 pages, 200,000 events, 20 s. */
    public static final PollBudget DEFAULT = new PollBudget(100, 200_000, Duration.ofSeconds(20));

    public PollBudget {
        if (pages < 1 || events < 1 || time.isNegative() || time.isZero()) {
            throw new IllegalArgumentException("a poll budget must be positive");
        }
    }
}
