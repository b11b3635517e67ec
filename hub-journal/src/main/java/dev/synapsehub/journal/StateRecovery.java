package dev.synapsehub.journal;

import dev.synapsehub.core.journal.JournalException;
import dev.synapsehub.core.state.CoordinationState;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;

/**
 * Start-up of a journaled state: the newest valid snapshot plus the journal tail after it, or
 * a full replay when there is none (INV-RR-1).
 *
 * <p>Snapshots are tried newest first. One that is unusable (its checksum fails, it does not
 * decode, it covers more than the journal holds, rows after it were compacted away, or the
 * state refuses it) is skipped with a WARN naming it, why, and what is tried next: the previous
 * snapshot, or a full replay of the journal. When rows were compacted and no snapshot covers
 * them, nothing can rebuild the state: start-up fails with a message rather than serve a state
 * that silently lost acknowledged work.
 *
 * <p>A start that succeeds retires the snapshots it skipped ({@link #recover}): left listed, an
 * unusable snapshot would count as one of the kept snapshots, so rotation would delete a usable
 * one in its place and retention would compact the rows only that one could replay, and one
 * more damaged snapshot would leave nothing to start from. Retired, it is no longer listed, so
 * the snapshots rotation and retention count are the one this start loaded and those written
 * after it.
 */
public final class StateRecovery {
    private static final System.Logger LOG = System.getLogger(StateRecovery.class.getName());

    private StateRecovery() {
    }

    /**
     * What start-up did.
     *
     * @param state the rebuilt state, expired at the start-up instant
     * @param snapshot the snapshot loaded, or null after a full replay
     * @param fallbacks one line per snapshot skipped, newest first (each was logged as a WARN)
     * @param tail what the replay after the snapshot (or the full replay) read
     * @param loadSeconds time spent reading, checking, decoding and restoring the snapshot
     * @param unusable the snapshots skipped, newest first (those {@code fallbacks} names)
     */
    public record Recovery(CoordinationState state, SnapshotStore.Info snapshot, List<String> fallbacks,
                           ReplayStats tail, double loadSeconds, List<SnapshotStore.Info> unusable) {
        public Recovery {
            fallbacks = List.copyOf(fallbacks);
            unusable = List.copyOf(unusable);
        }

        /** Events applied: those of the tail (a snapshot's are not counted). */
        public long replayed() {
            return tail.replayed();
        }
    }

    /**
     * Rebuilds a state for {@code journal} from {@code fresh.get()} and expires it at {@code now},
     * first discarding snapshots a stop left incomplete, then retiring those found unusable.
     */
    public static Recovery recover(SqliteJournal journal, Supplier<CoordinationState> fresh, double now)
            throws JournalException {
        return recover(journal, fresh, now, StartupPhases.startingNow());
    }

    /** As {@link #recover(SqliteJournal, Supplier, double)}, marking each step in {@code phases}. */
    public static Recovery recover(SqliteJournal journal, Supplier<CoordinationState> fresh, double now,
                                   StartupPhases phases) throws JournalException {
        return recover(journal, fresh, now, phases, SnapshotReadAhead.none());
    }

    /**
     * As {@link #recover(SqliteJournal, Supplier, double, StartupPhases)}, with the body
     * {@code readAhead} read when it is the snapshot chosen.
     */
    public static Recovery recover(SqliteJournal journal, Supplier<CoordinationState> fresh, double now,
                                   StartupPhases phases, SnapshotReadAhead readAhead) throws JournalException {
        int discarded = journal.snapshots().discardIncomplete();
        if (discarded > 0) {
            LOG.log(System.Logger.Level.INFO, "discarded " + discarded + " snapshot(s) a stop left incomplete or an"
                    + " earlier start retired as unusable");
        }
        Recovery recovery = rebuild(journal, fresh, now, phases, readAhead);
        retireUnusable(journal.snapshots(), recovery.unusable(), recovery.snapshot() != null);
        return recovery;
    }

    /**
     * Retires the snapshots this start skipped: never listed again, so rotation and retention
     * count only snapshots that load (the fallback the docs promise), and the snapshotter's
     * policy counts from the snapshot loaded. The body stays until the next start discards it
     * with the incomplete ones, so it can still be looked at ({@code sqlite3 -readonly}).
     */
    private static void retireUnusable(SnapshotStore store, List<SnapshotStore.Info> unusable, boolean oneLoaded)
            throws JournalException {
        if (unusable.isEmpty()) {
            return;
        }
        StringBuilder ids = new StringBuilder();
        for (SnapshotStore.Info info : unusable) {
            store.retire(info.id());
            ids.append(ids.length() == 0 ? "#" : ", #").append(info.id());
        }
        LOG.log(System.Logger.Level.WARNING, unusable.size() + " snapshot(s) found unusable at start retired (" + ids
                + "): rotation and retention no longer count them as kept, so " + (oneLoaded
                ? "the snapshot loaded and the rows after it stay the fallback until newer snapshots replace it"
                : "no snapshot is kept now and the journal's rows (this start's full replay) are the fallback until"
                        + " a new snapshot is written") + "; their bodies are discarded at the next start");
    }

    /** As {@link #recover}, but writes nothing to the file (the journal tools). */
    public static Recovery rebuild(SqliteJournal journal, Supplier<CoordinationState> fresh, double now)
            throws JournalException {
        return rebuild(journal, fresh, now, StartupPhases.startingNow(), SnapshotReadAhead.none());
    }

    private static Recovery rebuild(SqliteJournal journal, Supplier<CoordinationState> fresh, double now,
                                    StartupPhases phases, SnapshotReadAhead readAhead) throws JournalException {
        SnapshotStore store = journal.snapshots();
        long compacted = journal.compactedThrough();
        List<SnapshotStore.Info> snapshots = store.list();
        List<String> fallbacks = new ArrayList<>();
        List<SnapshotStore.Info> unusable = new ArrayList<>();
        phases.mark("snapshot list");
        for (int i = 0; i < snapshots.size(); i++) {
            SnapshotStore.Info info = snapshots.get(i);
            long start = System.nanoTime();
            CoordinationState state = fresh.get();
            String why = load(journal, info, compacted, state, phases, readAhead);
            if (why == null) {
                double load = (System.nanoTime() - start) / 1e9;
                LOG.log(System.Logger.Level.INFO, String.format(Locale.ROOT,
                        "state loaded from snapshot #%d (seq %,d, %,d bytes) in %.3f s; replaying the journal after it",
                        info.id(), info.seq(), info.bytes(), load));
                replayAfter(journal, info.seq(), state);
                phases.mark("tail replay");
                state.settle(now, journal.lastSeq());
                phases.mark("settle");
                return new Recovery(state, info, fallbacks, journal.lastReplay(), load, unusable);
            }
            String next = i + 1 < snapshots.size() ? describe(snapshots.get(i + 1)) : compacted > 0
                    ? "nothing: rows through seq " + compacted + " were compacted away" : "a full replay of the journal";
            String line = describe(info) + " is unusable: " + why + "; falling back to " + next;
            LOG.log(System.Logger.Level.WARNING, line);
            fallbacks.add(line);
            unusable.add(info);
        }
        if (compacted > 0) {
            throw new JournalRefusedException(journal.path() + ": rows through seq " + compacted + " were compacted"
                    + " and no valid snapshot covers them, so the state cannot be rebuilt. Restore the file from a"
                    + " backup (synapse-hub journal backup). The file was not modified.");
        }
        CoordinationState state = fresh.get();
        replayAfter(journal, 0, state);
        phases.mark("full replay");
        state.settle(now, journal.lastSeq());
        phases.mark("settle");
        return new Recovery(state, null, fallbacks, journal.lastReplay(), 0, unusable);
    }

    /**
     * Applies the journal after {@code afterSeq} to {@code state}, then raises its epoch counter
     * to the epochs the skipped claim rows still show (INV-EF-1: a damaged row's epoch was
     * issued, and must not be issued again).
     */
    static void replayAfter(SqliteJournal journal, long afterSeq, CoordinationState state) throws JournalException {
        journal.replayAfter(afterSeq, state::apply);
        state.raiseEpochFloor(journal.lastReplay().epochFloor());
    }

    /** Loads a snapshot into {@code state}; returns null, or why it cannot be used. */
    static String load(SqliteJournal journal, SnapshotStore.Info info, long compacted, CoordinationState state,
                       StartupPhases phases, SnapshotReadAhead readAhead) throws JournalException {
        if (info.seq() > journal.lastSeq()) {
            return "it covers seq " + info.seq() + " but the journal ends at seq " + journal.lastSeq();
        }
        if (info.seq() < compacted) {
            return "rows after it, through seq " + compacted + ", were compacted away";
        }
        ClaimsPipe pipe = null;
        try {
            byte[] body = readAhead.take(journal.path(), info);
            if (body == null) {
                body = journal.snapshots().read(info);
            }
            phases.mark("snapshot read and check");
            // the claims load on a thread of their own while they are decoded, this one loads the rest
            pipe = new ClaimsPipe(state, StateRecovery::onOwnThread);
            StateSnapshot snapshot = SnapshotCodec.decode(body, pipe);
            phases.mark("snapshot decode");
            if (snapshot.seq() != info.seq()) {
                pipe.abandon();
                return "its body covers seq " + snapshot.seq() + ", its header " + info.seq();
            }
            RuntimeException rest = null;
            try {
                state.restoreAllButClaims(snapshot.image());
            } catch (RuntimeException e) { // held until the claims' thread is done: it writes this state
                rest = e;
            }
            pipe.awaitRestored();
            if (rest != null) {
                throw rest;
            }
            phases.mark("snapshot restore");
            journal.carryCorruption(snapshot.corruptRows(), snapshot.firstCorruptSeq());
            return null;
        } catch (CorruptSnapshotException e) {
            abandon(pipe);
            return e.getMessage();
        } catch (RuntimeException e) {
            abandon(pipe);
            return "the state refused it: " + e;
        }
    }

    private static void abandon(ClaimsPipe pipe) {
        if (pipe != null) {
            pipe.abandon();
        }
    }

    /** Runs {@code task} on a thread of its own (start-up work, once per snapshot tried). */
    private static void onOwnThread(Runnable task) {
        Thread t = new Thread(task, "snapshot-restore-claims");
        t.setDaemon(true);
        t.start();
    }

    /** How a snapshot is named in logs and reports. */
    static String describe(SnapshotStore.Info info) {
        return String.format(Locale.ROOT, "snapshot #%d (seq %,d, taken %s)", info.id(), info.seq(),
                Instant.ofEpochMilli((long) (info.createdAt() * 1000)));
    }
}
