package dev.synapsehub.core.actor;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAccumulator;

/** Counters the actor updates and anyone may read (the metrics endpoint, benchmarks). */
public final class ActorMetrics {
    final AtomicLong batches = new AtomicLong();
    final AtomicLong commands = new AtomicLong();
    final AtomicLong eventsCommitted = new AtomicLong();
    final AtomicLong commitNanosTotal = new AtomicLong();
    final LongAccumulator commitNanosMax = new LongAccumulator(Math::max, 0);
    final AtomicLong lastCommitNanos = new AtomicLong();
    final AtomicLong journalFailures = new AtomicLong();
    final AtomicLong busyRefusals = new AtomicLong();
    final AtomicLong slowCommits = new AtomicLong();
    final AtomicLong writerFailures = new AtomicLong();
    /** False from a failed append until the journal commits again. */
    volatile boolean journalWriting = true;
    /** True while an append's outcome is unknown and the actor waits to settle it. */
    volatile boolean journalInDoubt;

    /** Journal transactions committed (or attempted). */
    public long batches() {
        return batches.get();
    }

    /** Mutations decided. */
    public long commands() {
        return commands.get();
    }

    /** Mean mutations per journal transaction. */
    public double meanBatchSize() {
        long b = batches.get();
        return b == 0 ? 0 : (double) commands.get() / b;
    }

    /** Events committed to the journal. */
    public long eventsCommitted() {
        return eventsCommitted.get();
    }

    /** Mean commit latency in microseconds. */
    public double meanCommitMicros() {
        long b = batches.get();
        return b == 0 ? 0 : commitNanosTotal.get() / 1000.0 / b;
    }

    /** Slowest commit so far in microseconds. */
    public double maxCommitMicros() {
        return commitNanosMax.get() / 1000.0;
    }

    /** Latest commit latency in microseconds. */
    public double lastCommitMicros() {
        return lastCommitNanos.get() / 1000.0;
    }

    /** Appends that failed (each refused its whole batch). */
    public long journalFailures() {
        return journalFailures.get();
    }

    /** Submissions refused because the queue was full. */
    public long busyRefusals() {
        return busyRefusals.get();
    }

    /** True unless the last append failed and the journal has not committed since. */
    public boolean journalWriting() {
        return journalWriting;
    }

    /** True while the actor holds a batch whose commit outcome is unknown (nothing is answered meanwhile). */
    public boolean journalInDoubt() {
        return journalInDoubt;
    }

    /** Times the actor stopped for good (0 or 1, see {@code CoordinationActor#failure()}). */
    public long writerFailures() {
        return writerFailures.get();
    }

    /** Commits slower than the configured threshold. */
    public long slowCommits() {
        return slowCommits.get();
    }
}
