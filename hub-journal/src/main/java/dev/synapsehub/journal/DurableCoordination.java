package dev.synapsehub.journal;

import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.journal.JournalException;
import dev.synapsehub.core.state.CoordinationState;

import java.nio.file.Path;
import java.util.function.Supplier;

/**
 * Start-up of a journaled hub core: open the SQLite journal, rebuild the state by replaying it
 * through the live {@code apply} and expire what is past due now (INV-RR-1), then start the
 * actor over the same journal.
 *
 * @param actor the started actor; closing it closes the journal
 * @param journal the open journal
 * @param replay what the replay read (corrupt rows are counted there)
 */
public record DurableCoordination(CoordinationActor actor, SqliteJournal journal, ReplayStats replay) {

    /** Opens {@code db}, replays it into {@code fresh.get()} and starts an actor. */
    public static DurableCoordination open(Path db, Clock clock, Supplier<CoordinationState> fresh,
                                           ActorSettings settings) throws JournalException {
        SqliteJournal journal = SqliteJournal.open(db);
        try {
            CoordinationState state = fresh.get();
            state.replay(journal, clock.nowSeconds(), done -> { });
            CoordinationActor actor = new CoordinationActor(state, journal, clock, settings);
            actor.start();
            return new DurableCoordination(actor, journal, journal.lastReplay());
        } catch (JournalException | RuntimeException e) {
            journal.close();
            throw e;
        }
    }

    /** With default state bounds and actor settings. */
    public static DurableCoordination open(Path db, Clock clock) throws JournalException {
        return open(db, clock, CoordinationState::new, ActorSettings.DEFAULTS);
    }
}
