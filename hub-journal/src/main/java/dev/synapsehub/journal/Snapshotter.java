package dev.synapsehub.journal;

import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.journal.JournalException;
import dev.synapsehub.core.state.StateImage;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Takes state snapshots of a running hub: periodically by {@link SnapshotPolicy} and on a clean
 * stop ({@link #close}).
 *
 * <p>One snapshot: the actor images the state at a commit boundary ({@link StateImage}: it
 * copies references to immutable records, a few milliseconds for 100,000 claims); the body is
 * encoded and checksummed on the snapshot thread, off the writer; then the actor writes it in
 * chunks of {@link SnapshotStore#CHUNK_BYTES}, each its own short transaction queued behind
 * whatever mutations are waiting, and a last FULL transaction makes it visible. So the writer
 * is never held for the whole body; {@link Result#longestWriterPauseMillis} reports the longest
 * single hold. Older snapshots beyond {@link SnapshotPolicy#keep} are then deleted, and
 * {@link Retention} compacts the rows the kept ones cover. A snapshot that is written counts as
 * taken even when that upkeep after it fails: the failure is counted ({@link #upkeepFailures()})
 * and logged once until upkeep works again, and the next snapshot comes by the policy as usual.
 *
 * <p>Whatever an attempt throws, an {@link Error} included, is counted, logged and reported
 * ({@link #lastAttemptFailed()}) and never reaches the timer, which would otherwise cancel every
 * later tick without a word. After a {@link VirtualMachineError} (say, out of memory while
 * encoding) the snapshotter keeps trying, since the heap may be short only for a burst and a hub
 * that stops snapshotting for good replays ever more at its next start; but the next attempt
 * waits {@link #VM_ERROR_BACKOFF_SECONDS}, doubling to {@link #MAX_VM_ERROR_BACKOFF_SECONDS}:
 * each attempt images the state and allocates the whole body again, and retried every tick it
 * would take that memory from the writer and the connections that serve agents.
 */
public final class Snapshotter implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(Snapshotter.class.getName());
    /** Hub seconds the first attempt after a {@link VirtualMachineError} waits. */
    static final double VM_ERROR_BACKOFF_SECONDS = 60;
    /** The longest wait after {@link VirtualMachineError}s in a row. */
    static final double MAX_VM_ERROR_BACKOFF_SECONDS = 900;

    /**
     * One snapshot taken.
     *
     * @param imageMillis time the writer spent imaging the state
     * @param encodeMillis time spent encoding and checksumming, off the writer
     * @param longestWriterPauseMillis the longest single hold of the writer (image, a chunk, ...)
     * @param totalMillis from the image to the completed, rotated and compacted snapshot
     * @param deletedSnapshots older snapshots deleted by rotation
     * @param compactedRows journal rows deleted by retention
     * @param upkeepFailed rotation or compaction after the (written) snapshot failed
     */
    public record Result(SnapshotStore.Info info, double imageMillis, double encodeMillis,
                         double longestWriterPauseMillis, double totalMillis, int deletedSnapshots,
                         long compactedRows, boolean upkeepFailed) {
    }

    /** A snapshot written and made visible, before rotation and compaction. */
    private record Written(SnapshotStore.Info info, double imageMillis, double encodeMillis) {
    }

    /** What rotation and compaction did; {@code failure} is null when both worked. */
    private record Upkeep(int deletedSnapshots, long compactedRows, Throwable failure) {
    }

    private final SqliteJournal journal;
    private final WriterAccess writer;
    private final Clock clock;
    private final SnapshotPolicy policy;
    private final Retention retention;
    private final ScheduledExecutorService timer;
    private final AtomicLong taken = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();
    private final AtomicLong upkeepFailures = new AtomicLong();
    private long upkeepFailuresInARow; // upkeep failures in a row, guarded by this; logged at the first only
    private volatile long lastSeq;
    private final int unusableAtStart;
    private volatile double lastAt;
    private volatile Result last;
    private volatile boolean lastAttemptFailed; // the newest attempt did not write its snapshot
    private int vmErrorsInARow; // guarded by this
    private volatile double retryNotBefore; // hub time; set after a VirtualMachineError
    private boolean closed;

    private Snapshotter(SqliteJournal journal, WriterAccess writer, Clock clock, SnapshotPolicy policy,
                        Retention retention, long coveredSeq, int unusableAtStart) {
        this.journal = journal;
        this.writer = writer;
        this.clock = clock;
        this.policy = policy;
        this.retention = retention;
        this.lastSeq = coveredSeq;
        this.unusableAtStart = unusableAtStart;
        this.lastAt = clock.nowSeconds();
        this.timer = policy.periodic() ? Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "synapse-snapshots");
            t.setDaemon(true);
            return t;
        }) : null;
    }

    /**
     * Starts taking snapshots of the hub whose {@code actor} appends to {@code journal}; after
     * each, {@code retention} compacts what the kept snapshots cover.
     */
    public static Snapshotter start(SqliteJournal journal, CoordinationActor actor, Clock clock,
                                    SnapshotPolicy policy, Retention retention) throws JournalException {
        WriterAccess writer = WriterAccess.actor(actor, 60);
        return schedule(new Snapshotter(journal, writer, clock, policy, retention, newestListed(journal, writer), 0));
    }

    /**
     * As {@link #start(SqliteJournal, CoordinationActor, Clock, SnapshotPolicy, Retention)} for the
     * hub that {@code from} rebuilt: the policy counts rows from the snapshot it loaded (none after a
     * full replay), not from one it skipped, which may claim a seq the journal never reached.
     */
    public static Snapshotter start(SqliteJournal journal, CoordinationActor actor, Clock clock,
                                    SnapshotPolicy policy, Retention retention, StateRecovery.Recovery from) {
        long covered = from.snapshot() == null ? 0 : from.snapshot().seq();
        return schedule(new Snapshotter(journal, WriterAccess.actor(actor, 60), clock, policy, retention, covered,
                from.unusable().size()));
    }

    /** The seq the newest listed snapshot covers, 0 when none. */
    private static long newestListed(SqliteJournal journal, WriterAccess writer) throws JournalException {
        List<SnapshotStore.Info> existing = writer.run(s -> journal.snapshots().list());
        return existing.isEmpty() ? 0 : existing.get(0).seq();
    }

    private static Snapshotter schedule(Snapshotter s) {
        if (s.timer != null) {
            s.timer.scheduleWithFixedDelay(s::tick, 1, 1, TimeUnit.SECONDS);
        }
        return s;
    }

    /** A snapshotter whose timer never runs, so a test drives {@link #tick()} by hand. */
    static Snapshotter unscheduled(SqliteJournal journal, WriterAccess writer, Clock clock, SnapshotPolicy policy,
                                   Retention retention) throws JournalException {
        Snapshotter s = new Snapshotter(journal, writer, clock, policy, retention, newestListed(journal, writer), 0);
        if (s.timer != null) {
            s.timer.shutdownNow();
        }
        return s;
    }

    /**
     * One timer tick: a snapshot when the policy says one is due (and no backoff after a
     * {@link VirtualMachineError} holds it). Throws nothing: the timer cancels a task that throws.
     */
    void tick() {
        try {
            long rows = journal.lastSeq() - lastSeq;
            double now = clock.nowSeconds();
            boolean due = (policy.everyRows() > 0 && rows >= policy.everyRows())
                    || (policy.intervalSeconds() > 0 && rows > 0 && now - lastAt >= policy.intervalSeconds());
            if (due && now >= retryNotBefore) {
                takeNow();
            }
        } catch (Throwable t) {
            // counted, reported and logged in takeNow; the next tick tries again
        }
    }

    /**
     * Takes a snapshot now (one at a time); logs and counts a failure to write it before
     * rethrowing it. A failure of the rotation or compaction after a written snapshot is not
     * thrown: see {@link Result#upkeepFailed()}.
     */
    public synchronized Result takeNow() throws JournalException {
        long start = System.nanoTime();
        writer.resetLongest();
        Written written;
        try {
            written = write(journal, writer, clock);
        } catch (JournalException | RuntimeException | Error e) {
            failed(e);
            throw e;
        }
        // written and visible: the policy counts from it whatever upkeep does next
        lastAttemptFailed = false;
        vmErrorsInARow = 0;
        retryNotBefore = 0;
        lastSeq = written.info().seq();
        lastAt = clock.nowSeconds();
        taken.incrementAndGet();
        Upkeep upkeep = upkeep(journal, writer, policy.keep(), retention, clock.nowSeconds());
        noteUpkeep(written.info(), upkeep.failure());
        Result r = new Result(written.info(), written.imageMillis(), written.encodeMillis(),
                writer.longestNanos() / 1e6, (System.nanoTime() - start) / 1e6, upkeep.deletedSnapshots(),
                upkeep.compactedRows(), upkeep.failure() != null);
        last = r;
        LOG.log(System.Logger.Level.INFO, String.format(Locale.ROOT,
                "state snapshot #%d at seq %,d: %,d bytes in %d chunk(s); image %.1f ms on the writer, encode %.1f ms,"
                        + " longest writer pause %.1f ms, %.0f ms in all; %d older deleted, %,d journal rows compacted%s",
                r.info().id(), r.info().seq(), r.info().bytes(), r.info().chunks(), r.imageMillis(), r.encodeMillis(),
                r.longestWriterPauseMillis(), r.totalMillis(), r.deletedSnapshots(), r.compactedRows(),
                r.upkeepFailed() ? " (upkeep failed)" : ""));
        return r;
    }

    /** Counts, reports and logs a snapshot that could not be written; holds the next attempt after a VM error. */
    private void failed(Throwable e) {
        failures.incrementAndGet();
        lastAttemptFailed = true;
        if (e instanceof VirtualMachineError) {
            double wait = Math.min(MAX_VM_ERROR_BACKOFF_SECONDS, VM_ERROR_BACKOFF_SECONDS * Math.pow(2, vmErrorsInARow));
            vmErrorsInARow++;
            retryNotBefore = clock.nowSeconds() + wait;
            LOG.log(System.Logger.Level.ERROR, String.format(Locale.ROOT, "state snapshot failed with %s (the journal"
                    + " is unaffected; the next attempt waits %.0f s so it does not take memory from serving)", e,
                    wait), e);
        } else {
            LOG.log(System.Logger.Level.WARNING, "state snapshot failed (the journal is unaffected; the next one"
                    + " will try again): " + e.getMessage(), e);
        }
    }

    /** Counts an upkeep failure and logs only the first of a run, so a lasting fault is not a WARN a snapshot. */
    private void noteUpkeep(SnapshotStore.Info info, Throwable failure) {
        if (failure == null) {
            if (upkeepFailuresInARow > 0) {
                LOG.log(System.Logger.Level.INFO, "snapshot rotation and journal compaction work again after "
                        + upkeepFailuresInARow + " failed attempt(s)");
            }
            upkeepFailuresInARow = 0;
            return;
        }
        upkeepFailures.incrementAndGet();
        if (upkeepFailuresInARow++ == 0) {
            LOG.log(System.Logger.Level.WARNING, "snapshot #" + info.id() + " is written, but rotating older snapshots or"
                    + " compacting the journal after it failed (retried after each snapshot; not logged again until it"
                    + " works): " + failure.getMessage(), failure);
        } else {
            LOG.log(System.Logger.Level.DEBUG, "snapshot rotation or journal compaction failed again: "
                    + failure.getMessage());
        }
    }

    /** Snapshots taken by this snapshotter. */
    public long taken() {
        return taken.get();
    }

    /** Snapshots that failed. */
    public long failures() {
        return failures.get();
    }

    /** Rotations or compactions that failed after a written snapshot. */
    public long upkeepFailures() {
        return upkeepFailures.get();
    }

    /**
     * True while the newest snapshot attempt failed to write its snapshot (until one is written):
     * the journal is intact, but a restart replays more of it than the policy intends.
     */
    public boolean lastAttemptFailed() {
        return lastAttemptFailed;
    }

    /** Snapshots the start found unusable and retired (each logged as a WARN then). */
    public int unusableAtStart() {
        return unusableAtStart;
    }

    /** The seq the newest snapshot covers (the one the start loaded included), 0 when none. */
    public long lastSeq() {
        return lastSeq;
    }

    /** The last snapshot taken, or null. */
    public Result last() {
        return last;
    }

    /**
     * Stops the timer, lets a snapshot in progress finish, and takes one more when the policy
     * asks for one at shutdown and rows were added since the last. Call it before the actor is
     * closed (the snapshot is written through it).
     */
    @Override
    public void close() {
        if (timer != null) {
            timer.shutdownNow();
        }
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            if (policy.onShutdown() && journal.lastSeq() > lastSeq) {
                try {
                    takeNow();
                } catch (Throwable e) {
                    // logged and counted; the actor and journal still close, and the next start replays the tail
                }
            }
        }
    }

    /** Images the state, encodes it off the writer and writes it in chunks until it is complete. */
    private static Written write(SqliteJournal journal, WriterAccess writer, Clock clock) throws JournalException {
        double createdAt = clock.nowSeconds();
        long imageStart = System.nanoTime();
        StateSnapshot snapshot = writer.run(s -> new StateSnapshot(createdAt, journal.corruptRows(),
                journal.firstCorruptSeq(), s.image()));
        double imageMillis = (System.nanoTime() - imageStart) / 1e6;
        long encodeStart = System.nanoTime();
        byte[] body = SnapshotCodec.encode(snapshot);
        long crc = SnapshotCodec.crc32c(body);
        double encodeMillis = (System.nanoTime() - encodeStart) / 1e6;
        SnapshotStore store = journal.snapshots();
        long id = writer.run(s -> store.begin(snapshot.seq(), createdAt));
        int chunks = (body.length + SnapshotStore.CHUNK_BYTES - 1) / SnapshotStore.CHUNK_BYTES;
        try {
            for (int i = 0; i < chunks; i++) {
                int idx = i;
                byte[] data = Arrays.copyOfRange(body, i * SnapshotStore.CHUNK_BYTES,
                        Math.min(body.length, (i + 1) * SnapshotStore.CHUNK_BYTES));
                writer.run(s -> {
                    store.writeChunk(id, idx, data);
                    return null;
                });
            }
            writer.run(s -> {
                store.complete(id, body.length, chunks, crc);
                return null;
            });
        } catch (JournalException | RuntimeException | Error e) {
            try {
                writer.run(s -> {
                    store.delete(id);
                    return null;
                });
            } catch (JournalException | RuntimeException cleanup) {
                e.addSuppressed(cleanup); // left incomplete: discarded at the next start
            }
            throw e;
        }
        SnapshotStore.Info info = new SnapshotStore.Info(id, snapshot.seq(), createdAt, SnapshotCodec.FORMAT,
                body.length, chunks, crc);
        return new Written(info, imageMillis, encodeMillis);
    }

    /** Rotates to {@code keep} snapshots, then compacts as of hub time {@code now}; a failure is returned, not thrown. */
    private static Upkeep upkeep(SqliteJournal journal, WriterAccess writer, int keep, Retention retention,
                                 double now) {
        int deleted = 0;
        try {
            deleted = rotate(journal.snapshots(), writer, keep);
            return new Upkeep(deleted, retention.compact(journal, writer, keep, now), null);
        } catch (JournalException | RuntimeException | Error e) {
            return new Upkeep(deleted, 0, e);
        }
    }

    /** Deletes the snapshots beyond the newest {@code keep} that no backup is copying; returns how many. */
    private static int rotate(SnapshotStore store, WriterAccess writer, int keep) throws JournalException {
        int deleted = 0;
        List<SnapshotStore.Info> all = writer.run(s -> store.list());
        for (SnapshotStore.Info old : all.subList(Math.min(keep, all.size()), all.size())) {
            if (store.pinned(old.id())) {
                continue; // a backup is copying it; a later rotation deletes it
            }
            // retired first (never listed again), then a chunk per short transaction, the header last
            writer.run(s -> {
                store.retire(old.id());
                return null;
            });
            for (int idx = old.chunks() - 1; idx >= 0; idx--) {
                int chunk = idx;
                writer.run(s -> {
                    store.deleteChunk(old.id(), chunk);
                    return null;
                });
            }
            writer.run(s -> {
                store.delete(old.id());
                return null;
            });
            deleted++;
        }
        return deleted;
    }
}
