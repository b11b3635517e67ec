package dev.synapsehub.journal;

import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.journal.JournalException;
import dev.synapsehub.core.state.CoordinationState;

import java.nio.file.Path;
import java.util.function.Supplier;

/**
 * Start-up of a journaled hub core: open the SQLite journal, rebuild the state from the newest
 * valid snapshot plus the journal tail (or a full replay) and expire what is past due now
 * (INV-RR-1, {@link StateRecovery}), then start the actor over the same journal and, when the
 * policy asks for them, take snapshots ({@link Snapshotter}).
 *
 * @param actor the started actor; closing it closes the journal
 * @param journal the open journal
 * @param recovery how the state was rebuilt
 * @param snapshotter takes snapshots by the policy, and on demand ({@link Snapshotter#takeNow()})
 */
public record DurableCoordination(CoordinationActor actor, SqliteJournal journal, StateRecovery.Recovery recovery,
                                  Snapshotter snapshotter) implements AutoCloseable {

    /**
     * Opens {@code db}, rebuilds into {@code fresh.get()}, starts an actor, snapshots by
     * {@code policy} and compacts by {@code retention} after each snapshot.
     */
    public static DurableCoordination open(Path db, Clock clock, Supplier<CoordinationState> fresh,
                                           ActorSettings settings, SnapshotPolicy policy, Retention retention)
            throws JournalException {
        SqliteJournal journal = SqliteJournal.open(db);
        CoordinationActor actor = null;
        try {
            StateRecovery.Recovery recovery = StateRecovery.recover(journal, fresh, clock.nowSeconds());
            actor = new CoordinationActor(recovery.state(), journal, clock, settings);
            actor.start();
            Snapshotter snapshotter = Snapshotter.start(journal, actor, clock, policy, retention, recovery);
            return new DurableCoordination(actor, journal, recovery, snapshotter);
        } catch (JournalException | RuntimeException e) {
            if (actor != null) {
                actor.close();
            } else {
                journal.close();
            }
            throw e;
        }
    }

    /** Snapshots by {@code policy}, every row kept. */
    public static DurableCoordination open(Path db, Clock clock, Supplier<CoordinationState> fresh,
                                           ActorSettings settings, SnapshotPolicy policy) throws JournalException {
        return open(db, clock, fresh, settings, policy, Retention.keepAll());
    }

    /** Without automatic snapshots (a start replays what no snapshot covers). */
    public static DurableCoordination open(Path db, Clock clock, Supplier<CoordinationState> fresh,
                                           ActorSettings settings) throws JournalException {
        return open(db, clock, fresh, settings, SnapshotPolicy.NEVER);
    }

    /** With default state bounds and actor settings, without snapshots. */
    public static DurableCoordination open(Path db, Clock clock) throws JournalException {
        return open(db, clock, CoordinationState::new, ActorSettings.DEFAULTS);
    }

    /** What the replay after the snapshot (or the full replay) read; corrupt rows are counted there. */
    public ReplayStats replay() {
        return recovery.tail();
    }

    /** Takes the shutdown snapshot the policy asks for, then closes the actor and the journal. */
    @Override
    public void close() throws JournalException {
        snapshotter.close();
        actor.close();
    }
}
