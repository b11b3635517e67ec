package dev.synapsehub.mesh;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What the actor thread knows about the replicated log: the index of the last record reflected
 * in its state (its own speculative batches included, once committed), the last event seq, the
 * term it may decide in, and who waits for a seq to be applied here. Touched only on the actor
 * thread; the volatile fields are read by status reports.
 */
final class ReplicaCursor {
    private volatile long appliedIndex;
    private volatile long appliedSeq;
    private volatile long readyTerm = -1;
    private final TreeMap<Long, List<Runnable>> waiters = new TreeMap<>();

    long appliedIndex() {
        return appliedIndex;
    }

    long appliedSeq() {
        return appliedSeq;
    }

    long readyTerm() {
        return readyTerm;
    }

    /** The record at {@code index} is in the state, its events through {@code seq}. */
    void applied(long index, long seq) {
        appliedIndex = index;
        appliedSeq = seq;
        Map.Entry<Long, List<Runnable>> first;
        List<Runnable> due = new ArrayList<>();
        while ((first = waiters.firstEntry()) != null && first.getKey() <= seq) {
            due.addAll(waiters.pollFirstEntry().getValue());
        }
        due.forEach(Runnable::run);
    }

    /** This node may decide in {@code term} (it leads it and has applied all before it). */
    void ready(long term) {
        readyTerm = term;
    }

    /** Runs {@code action} once the state holds seq {@code seq} (now, if it already does). */
    void whenApplied(long seq, Runnable action) {
        if (seq <= appliedSeq) {
            action.run();
        } else {
            waiters.computeIfAbsent(seq, k -> new ArrayList<>()).add(action);
        }
    }
}
