package dev.synapsehub.core.actor;

import dev.synapsehub.core.command.Command;
import dev.synapsehub.core.journal.JournaledEvent;

import java.util.List;

/**
 * Told on the actor thread what each commit and each decision cost, so an edge can keep
 * histograms without hub-core knowing any metrics library. Implementations must be cheap and
 * must never block: they run on the hub's only writer.
 */
public interface ActorObserver {
    /** Observes nothing. */
    ActorObserver NONE = new ActorObserver() {
    };

    /** A journal transaction of {@code commands} decided mutations ({@code events} events) committed in {@code nanos}. */
    default void committed(long nanos, int commands, int events) {
    }

    /**
     * A batch committed these events, in commit order, before any caller hears of it (the
     * operator cockpit's live feed). Hand them off; never render or block here.
     */
    default void published(List<JournaledEvent> committed) {
    }

    /** Deciding {@code command} took {@code nanos} (time-driven expiry included). */
    default void decided(Command command, long nanos) {
    }
}
