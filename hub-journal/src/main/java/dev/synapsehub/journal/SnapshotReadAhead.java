package dev.synapsehub.journal;

import dev.synapsehub.core.journal.JournalException;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Start-up: the newest snapshot of a journal read and checked on a thread of its own, from the
 * first line of the command, while the command line and the configuration are read (their CPU
 * leaves one of two cores idle much of the time). The start takes the body only for the very
 * snapshot it chose under the writer lock: same file and an equal {@link SnapshotStore.Info} row
 * (id, seq, time, format, length, chunk count, CRC-32C; snapshot ids are never reused and a
 * complete snapshot's chunks never change), and the body was read whole and passed the same
 * checks {@link SnapshotStore#read} makes. Anything else (no such file, no snapshot, a failed
 * read, another snapshot chosen) and the start reads the snapshot itself, as before. The read
 * is a read-only connection that never creates or changes a file, closed as soon as it is done.
 */
public final class SnapshotReadAhead {
    private static final System.Logger LOG = System.getLogger(SnapshotReadAhead.class.getName());

    private static final SnapshotReadAhead NONE = new SnapshotReadAhead(null, CompletableFuture.completedFuture(null));

    private final Path file;
    /** Completes with what was read, or null when nothing was; let go of once taken. */
    private CompletableFuture<Read> read;
    /** Whether the body was handed over (or refused) already: taken at most once, then let go. */
    private boolean taken;
    /** Whether the start loaded the body read here. */
    private boolean used;

    /** A snapshot's row and its checked body. */
    record Read(SnapshotStore.Info info, byte[] body) {
    }

    private SnapshotReadAhead(Path file, CompletableFuture<Read> read) {
        this.file = file;
        this.read = read;
    }

    /** Nothing read ahead: the start reads its snapshot itself. */
    public static SnapshotReadAhead none() {
        return NONE;
    }

    /** Starts reading the newest snapshot of the journal at {@code db} on a daemon thread. */
    public static SnapshotReadAhead start(Path db) {
        return start(db, SnapshotReadAhead::readNewest);
    }

    /**
     * As {@link #start(Path)}, reading with {@code reader}. Whatever it throws, an {@link Error}
     * too (a 40 MB body on a small heap), ends the read with nothing read, logged: the start never
     * waits on a read that died, it reads the snapshot itself.
     */
    static SnapshotReadAhead start(Path db, java.util.function.Function<Path, Read> reader) {
        Path file = db.toAbsolutePath();
        CompletableFuture<Read> read = new CompletableFuture<>();
        Thread thread = new Thread(() -> {
            Read done = null;
            try {
                done = reader.apply(file);
            } catch (Throwable unexpected) {
                LOG.log(System.Logger.Level.WARNING, file + ": the snapshot read ahead failed (the start reads it"
                        + " itself): " + unexpected, unexpected);
            } finally {
                read.complete(done);
            }
        }, "snapshot-read-ahead");
        thread.setDaemon(true);
        try {
            thread.start();
        } catch (OutOfMemoryError | RuntimeException e) { // no thread to be had: the start reads it
            return NONE;
        }
        return new SnapshotReadAhead(file, read);
    }

    private static Read readNewest(Path file) {
        if (!Files.isRegularFile(file)) {
            return null; // a new journal: nothing to read (and nothing is created here)
        }
        try (Connection c = SqliteJournalReader.readOnlyConnection(file)) {
            Sql sql = new Sql(c, file);
            List<SnapshotStore.Info> snapshots = SnapshotStore.list(sql);
            if (snapshots.isEmpty()) {
                return null;
            }
            SnapshotStore.Info newest = snapshots.get(0);
            return new Read(newest, SnapshotStore.read(sql, newest));
        } catch (JournalException | CorruptSnapshotException | SQLException e) {
            // not a failure of the start: it reads (and reports on) the snapshot itself
            LOG.log(System.Logger.Level.DEBUG, () -> file + ": no snapshot read ahead: " + e);
            return null;
        }
    }

    /**
     * The body of {@code info} of the journal at {@code journalFile}, if this read it ahead:
     * waits for the read to end; null when it read another file or snapshot, or nothing. Hands
     * a body over once; after the first call this holds none (nor keeps one alive).
     */
    byte[] take(Path journalFile, SnapshotStore.Info info) {
        if (taken || file == null) {
            return null;
        }
        taken = true;
        Read done = read.join();
        read = null; // the body is the caller's now, or garbage
        if (done == null || !done.info().equals(info) || !sameFile(journalFile)) {
            return null;
        }
        used = true;
        return done.body();
    }

    /** Whether the start took the body read here (its start-up line says so). */
    public boolean used() {
        return used;
    }

    /** Waits until the read has ended (tests: a journal changed after it). */
    void awaitRead() {
        if (read != null) {
            read.join();
        }
    }

    private boolean sameFile(Path journalFile) {
        try {
            return Files.isSameFile(file, journalFile);
        } catch (java.io.IOException e) {
            return false;
        }
    }

    /** SQL on the read-ahead's own connection. */
    private record Sql(Connection connection, Path file) implements SnapshotStore.Sql {
        @Override
        public <T> T query(String what, SqliteJournal.SqlWork<T> work) throws JournalException {
            try {
                return work.run(connection);
            } catch (SQLException e) {
                throw new JournalException(file + ": " + what + " failed: " + e.getMessage(), e);
            }
        }
    }
}
