package dev.synapsehub.core.undo;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/**
 * The one undo log of a state: every registry records into it while a batch is open, and a
 * rollback replays every step, newest first, across all registries in one pass (INV-JA-2).
 *
 * <p>Registries that publish a committed view to other threads also register an end-of-batch
 * action ({@link #atBatchEnd}); it runs once the batch ends, committed or rolled back, after the
 * undo steps, so what it publishes is exactly the state the batch left behind.
 */
public final class UndoLog {
    private Deque<Runnable> steps;
    private List<Runnable> atEnd;

    /**
     * Starts recording. A batch still open is ended as a commit would end it (its changes stay,
     * its end-of-batch actions run), so a committed view never misses a change.
     */
    public void begin() {
        if (steps != null) {
            commit();
        }
        steps = new ArrayDeque<>();
        atEnd = new ArrayList<>();
    }

    /** True while a batch is open (its changes are recorded and not yet committed). */
    public boolean isOpen() {
        return steps != null;
    }

    /**
     * Forgets the recorded steps (the batch committed), then runs the end-of-batch actions; as in
     * {@link #rollback}, one that throws does not stop the rest, and the first failure is rethrown.
     */
    public void commit() {
        List<Runnable> actions = atEnd;
        steps = null;
        atEnd = null;
        RuntimeException failure = runAll(actions, null);
        if (failure != null) {
            throw failure;
        }
    }

    /**
     * Runs every recorded step, newest first, stops recording, then runs the end-of-batch
     * actions. The steps run in the reverse of the order the changes were made, whichever
     * registry made them, so a change is undone only after every later one.
     *
     * <p>A step or action that throws does not stop the others: one registry's defect must not
     * leave every other registry holding the failed batch's changes or an unpublished view. The
     * first failure is rethrown once everything has run, later ones attached as suppressed.
     */
    public void rollback() {
        Deque<Runnable> pending = steps;
        List<Runnable> actions = atEnd;
        steps = null;
        atEnd = null;
        RuntimeException failure = null;
        if (pending != null) {
            while (!pending.isEmpty()) {
                failure = runCollecting(pending.pop(), failure);
            }
        }
        failure = runAll(actions, failure);
        if (failure != null) {
            throw failure;
        }
    }

    /** Records a step if a batch is open; outside a batch (replay, tests) it is dropped. */
    public void record(Runnable step) {
        if (steps != null) {
            steps.push(step);
        }
    }

    /**
     * Removes {@code key} from an insertion-ordered map; the undo puts it back where it was, not
     * at the end, so a rolled-back batch leaves the order a replay builds (INV-RR-1). Costs a
     * pass over the map's keys, only while a batch is open; meant for rare removals.
     *
     * @return the removed value, or null when the key was absent
     */
    public <K, V> V removeInPlace(java.util.LinkedHashMap<K, V> map, K key) {
        if (steps == null) {
            return map.remove(key);
        }
        int position = 0;
        for (K k : map.keySet()) {
            if (k.equals(key)) {
                break;
            }
            position++;
        }
        V removed = map.remove(key);
        if (removed != null) {
            int at = position;
            steps.push(() -> putBackAt(map, key, removed, at));
        }
        return removed;
    }

    /** Inserts {@code key} at {@code position} of {@code map}'s order: the keys from there move behind it. */
    private static <K, V> void putBackAt(java.util.LinkedHashMap<K, V> map, K key, V value, int position) {
        List<K> behind = new ArrayList<>();
        int i = 0;
        for (K k : map.keySet()) {
            if (i++ >= position) {
                behind.add(k);
            }
        }
        map.put(key, value);
        for (K k : behind) {
            map.put(k, map.remove(k));
        }
    }

    /**
     * Runs {@code action} once the open batch ends (after a commit, or after a rollback's undo
     * steps), in the order registered; outside a batch the change is final, so it runs now.
     */
    public void atBatchEnd(Runnable action) {
        if (atEnd != null) {
            atEnd.add(action);
        } else {
            action.run();
        }
    }

    /**
     * Sets the open batch aside (nothing is recorded until {@link #resume} or {@link #begin}):
     * for loading registries that must not record into it. Outside a batch it holds nothing.
     */
    public Suspended suspend() {
        Suspended held = new Suspended(steps, atEnd);
        steps = null;
        atEnd = null;
        return held;
    }

    /** Takes back a batch set aside by {@link #suspend}, exactly as it was. */
    public void resume(Suspended held) {
        steps = held.steps;
        atEnd = held.atEnd;
    }

    /** A batch set aside by {@link #suspend}. */
    public static final class Suspended {
        private final Deque<Runnable> steps;
        private final List<Runnable> atEnd;

        private Suspended(Deque<Runnable> steps, List<Runnable> atEnd) {
            this.steps = steps;
            this.atEnd = atEnd;
        }

        /** True when a batch was open when it was set aside. */
        public boolean wasOpen() {
            return steps != null;
        }
    }

    /** The number of steps recorded in the open batch (0 outside one); for tests and diagnostics. */
    public int size() {
        return steps == null ? 0 : steps.size();
    }

    private static RuntimeException runAll(List<Runnable> actions, RuntimeException failure) {
        if (actions != null) {
            for (Runnable action : actions) {
                failure = runCollecting(action, failure);
            }
        }
        return failure;
    }

    private static RuntimeException runCollecting(Runnable step, RuntimeException failure) {
        try {
            step.run();
        } catch (RuntimeException e) {
            if (failure == null) {
                return e;
            }
            failure.addSuppressed(e);
        }
        return failure;
    }
}
