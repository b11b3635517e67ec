package dev.synapsehub.core.messaging;

import dev.synapsehub.core.undo.UndoLog;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Per-target dead letters (INV-DG-3, §8.2): bounded to a number of targets (least recently
 * updated evicted) and forgetting entries idle longer than the maximum age.
 */
final class DeadLetterLedger {
    private final MessagingLimits limits;
    private final StampedLru<String, DeadLetter> entries;

    DeadLetterLedger(MessagingLimits limits, UndoLog undo) {
        this.limits = limits;
        this.entries = new StampedLru<>(limits.deadLetterTargets(), undo);
    }

    /** The entry for {@code target} still within the age window at {@code t}, or null. */
    DeadLetter current(String target, double t) {
        DeadLetter entry = entries.get(target);
        return entry != null && !stale(entry, t) ? entry : null;
    }

    private boolean stale(DeadLetter entry, double t) {
        return t - entry.lastTs() > limits.deadLetterMaxAgeSeconds();
    }

    /** Counts one more undelivered message to {@code target} at hub time {@code t}. */
    void record(String target, String sender, double t) {
        forgetStale(t);
        DeadLetter entry = current(target, t);
        long count = entry == null ? 1 : entry.count() + 1;
        entries.put(target, new DeadLetter(target, count, t, sender));
    }

    void clear(String name) {
        entries.remove(name);
    }

    /** Drops entries idle past the window; entries are ordered by last update. */
    void forgetStale(double t) {
        for (String eldest = entries.eldest(); eldest != null && stale(entries.get(eldest), t);
                eldest = entries.eldest()) {
            entries.remove(eldest);
        }
    }

    /** Entries within the window at {@code t}, sorted by count descending, then target. */
    List<DeadLetter> snapshot(double t) {
        List<DeadLetter> out = new ArrayList<>();
        for (DeadLetter entry : entries.view().values()) {
            if (!stale(entry, t)) {
                out.add(entry);
            }
        }
        out.sort(Comparator.comparingLong(DeadLetter::count).reversed().thenComparing(DeadLetter::target));
        return out;
    }

    DeadLetterTally tally(double t) {
        int targets = 0;
        long letters = 0;
        for (DeadLetter entry : entries.view().values()) {
            if (!stale(entry, t)) {
                targets++;
                letters += entry.count();
            }
        }
        return new DeadLetterTally(targets, letters);
    }

    int size() {
        return entries.size();
    }

    /** Every entry, stale or not, least recently updated first. */
    List<DeadLetter> image() {
        return new ArrayList<>(entries.view().values());
    }

    /** Loads entries, least recently updated first (the target bound re-applied). */
    void restore(List<DeadLetter> image) {
        for (DeadLetter entry : image) {
            entries.put(entry.target(), entry);
        }
    }
}
