package dev.synapsehub.core.undo;

import java.util.ArrayDeque;
import java.util.Deque;

/** Undo steps recorded while a batch is open, replayed newest first on rollback (INV-JA-2). */
public final class UndoLog {
    private Deque<Runnable> steps;

    /** Starts recording. */
    public void begin() {
        steps = new ArrayDeque<>();
    }

    /** Forgets the recorded steps: the batch committed. */
    public void commit() {
        steps = null;
    }

    /** Runs every recorded step, newest first, then stops recording. */
    public void rollback() {
        Deque<Runnable> pending = steps;
        steps = null;
        if (pending != null) {
            while (!pending.isEmpty()) {
                pending.pop().run();
            }
        }
    }

    /** Records a step if a batch is open; outside a batch (replay, tests) it is dropped. */
    public void record(Runnable step) {
        if (steps != null) {
            steps.push(step);
        }
    }
}
