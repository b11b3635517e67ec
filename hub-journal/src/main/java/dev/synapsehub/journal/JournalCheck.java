package dev.synapsehub.journal;

import dev.synapsehub.core.journal.JournalException;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.core.state.StateImage;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * An offline check of a journal file ({@code journal verify}): every stored snapshot is read
 * against its CRC-32C and decoded, every valid one plus the rows after it is replayed, and all
 * of them (and a full replay, when no row was compacted) must rebuild the same state without a
 * corrupt row. Writes nothing to the file.
 */
public final class JournalCheck {
    private JournalCheck() {
    }

    /**
     * What one snapshot's check found.
     *
     * @param problem null when the snapshot is valid and its tail replays cleanly into the common state
     * @param tail what the replay after it read, or null when it could not be loaded
     */
    public record SnapshotCheck(SnapshotStore.Info info, String problem, ReplayStats tail) {
    }

    /**
     * The whole check.
     *
     * @param fullReplay what a replay of every row read, or null when rows were compacted
     * @param problems every problem found, in words; empty when the file is sound
     * @param state the rebuilt state (newest valid snapshot plus tail, else the full replay)
     */
    public record Result(List<SnapshotCheck> snapshots, int incompleteSnapshots, long compactedThrough,
                         ReplayStats fullReplay, List<String> problems, CoordinationState state) {
        public Result {
            snapshots = List.copyOf(snapshots);
            problems = List.copyOf(problems);
        }

        /** True when nothing is wrong. */
        public boolean ok() {
            return problems.isEmpty();
        }
    }

    /** Checks {@code journal}, rebuilding into {@code fresh.get()} states expired at {@code now}. */
    public static Result verify(SqliteJournal journal, Supplier<CoordinationState> fresh, double now)
            throws JournalException {
        long compacted = journal.compactedThrough();
        List<String> problems = new ArrayList<>();
        List<SnapshotCheck> checks = new ArrayList<>();
        CoordinationState rebuilt = null;
        StateImage reference = null;
        String referenceName = null;
        for (SnapshotStore.Info info : journal.snapshots().list()) {
            String name = StateRecovery.describe(info);
            CoordinationState state = fresh.get();
            String problem = StateRecovery.load(journal, info, compacted, state, StartupPhases.startingNow(),
                    SnapshotReadAhead.none());
            ReplayStats tail = null;
            if (problem == null) {
                StateRecovery.replayAfter(journal, info.seq(), state);
                state.settle(now, journal.lastSeq());
                tail = journal.lastReplay();
                if (!tail.clean()) {
                    problem = tail.corrupt() + " corrupt row(s) after it, first at seq " + tail.firstCorruptSeq();
                } else if (journal.corruptRows() > 0) {
                    problem = "its state was built past " + journal.corruptRows() + " corrupt row(s), first at seq "
                            + journal.firstCorruptSeq();
                }
                StateImage image = state.image();
                if (reference == null) {
                    reference = image;
                    referenceName = name;
                    rebuilt = state;
                } else if (problem == null && !reference.equals(image)) {
                    problem = "it and the rows after it rebuild another state than " + referenceName;
                }
            }
            if (problem != null) {
                problems.add(name + ": " + problem);
            }
            checks.add(new SnapshotCheck(info, problem, tail));
        }
        ReplayStats full = null;
        if (compacted == 0) {
            journal.carryCorruption(0, 0);
            CoordinationState state = fresh.get();
            StateRecovery.replayAfter(journal, 0, state);
            state.settle(now, journal.lastSeq());
            full = journal.lastReplay();
            if (!full.clean()) {
                problems.add("full replay: " + full.corrupt() + " corrupt row(s), first at seq " + full.firstCorruptSeq());
            }
            if (reference != null && !reference.equals(state.image())) {
                problems.add(referenceName + " and the rows after it rebuild another state than a full replay");
            }
            if (rebuilt == null) {
                rebuilt = state;
            }
        } else if (rebuilt == null) {
            problems.add("rows through seq " + compacted + " were compacted and no valid snapshot covers them");
            rebuilt = fresh.get();
        }
        return new Result(checks, journal.snapshots().incomplete(), compacted, full, problems, rebuilt);
    }
}
