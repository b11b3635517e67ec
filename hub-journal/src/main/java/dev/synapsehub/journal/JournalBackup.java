package dev.synapsehub.journal;

import dev.synapsehub.core.journal.JournalException;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Locale;
import java.util.UUID;

/**
 * A consistent copy of a journal file ({@code synapse-hub journal backup}), taken through the
 * hub's own writer while it runs, or directly when no hub holds the file.
 *
 * <p>A running hub holds only its writer lock ({@code <file>-lock}, {@link WriterLock}); SQLite's
 * own locking stays normal, so other connections may read the file. But SQLite's online backup
 * restarts whenever the hub commits meanwhile, and {@code VACUUM INTO} on the hub's connection
 * would hold the writer for the whole copy. The copy is therefore logical and incremental, taken
 * through the hub's writer: in one writer turn it fixes the point of the copy (the last committed
 * seq S, the complete snapshots, the compaction floor), pins those snapshots against rotation and
 * registers a retention hold on the floor; then it reads snapshot chunks and rows up to S in
 * bounded writer turns ({@link #ROWS_PER_TURN} rows each) and writes them into a new file from the
 * backup thread. Committed rows and complete snapshots never change, so the copy is exactly the
 * journal as of S, whatever the hub commits meanwhile, and the writer is never held for the whole
 * copy.
 *
 * <p>The new file is built under a temporary name beside the target, synced, then renamed into
 * place; an existing target is never overwritten. Row values keep their SQLite storage class,
 * so even a corrupt row is copied as it is.
 */
public final class JournalBackup {
    private static final System.Logger LOG = System.getLogger(JournalBackup.class.getName());
    /** Rows read per writer turn. */
    static final int ROWS_PER_TURN = 2_000;

    private JournalBackup() {
    }

    /**
     * What a backup copied.
     *
     * @param seq the journal seq the copy is consistent at
     * @param rows rows copied
     * @param snapshots snapshots copied
     * @param bytes size of the new file
     * @param longestWriterPauseMillis the longest single hold of the source's writer
     * @param throughHub taken through a running hub (else offline: no writer was held)
     */
    public record Result(Path target, long seq, long rows, int snapshots, long bytes, double seconds,
                         double longestWriterPauseMillis, boolean throughHub) {
        /** One line for logs and the command. */
        public String summary() {
            return String.format(Locale.ROOT, "%s: consistent at seq %,d; %,d rows and %d snapshot(s), %,d bytes in"
                    + " %.2f s", target, seq, rows, snapshots, bytes, seconds)
                    + (throughHub ? String.format(Locale.ROOT, " (longest hold of the hub's writer %.1f ms)",
                    longestWriterPauseMillis) : "");
        }
    }

    /** The point a copy is consistent at, fixed in one writer turn. */
    private record Plan(long seq, long floor, List<SnapshotStore.Info> snapshots) {
    }

    /**
     * Copies the journal {@code db} no hub is running on into {@code target}, reading it read-only
     * (nothing of {@code db} is changed or created, so it may sit on read-only storage).
     *
     * @throws HubHoldsJournalException when a hub holds {@code db}'s writer lock (back it up through
     *     that hub instead)
     * @throws BackupTargetRefusedException when {@code target} is not a new file in an existing directory
     * @throws JournalRefusedException when {@code db} is not a current journal
     */
    public static Result offline(Path db, Path target) throws JournalException {
        if (!Files.isRegularFile(db)) {
            throw new JournalRefusedException(db + ": no such journal file");
        }
        try (SqliteJournal journal = SqliteJournal.openReadOnly(db)) {
            if (journal.hubRunning()) {
                throw new HubHoldsJournalException(db + " is open in a running hub (it holds " + WriterLock.lockFile(db)
                        .getFileName() + ") that did not take the backup through its control socket "
                        + JournalControl.socketPath(db).getFileName() + " (see its start-up log); stop it for an"
                        + " offline backup. Nothing was written.");
            }
            return copy(journal, WriterAccess.direct(null), null, target, false);
        }
    }

    /**
     * Copies {@code journal} into {@code target} through {@code writer} (the running hub's actor,
     * or directly offline); {@code retention}, when given, is held off the rows being copied.
     */
    static Result copy(SqliteJournal journal, WriterAccess writer, Retention retention, Path target)
            throws JournalException {
        return copy(journal, writer, retention, target, true);
    }

    private static Result copy(SqliteJournal journal, WriterAccess writer, Retention retention, Path target,
                               boolean throughHub) throws JournalException {
        long start = System.nanoTime();
        Path to = target.toAbsolutePath().normalize();
        checkTarget(journal.path(), to);
        writer.resetLongest();
        SnapshotStore store = journal.snapshots();
        String hold = "backup-" + UUID.randomUUID();
        Plan plan = writer.run(s -> {
            List<SnapshotStore.Info> snapshots = store.list();
            store.pin(snapshots);
            long floor = journal.compactedThrough();
            if (retention != null) {
                // registered on the writer: a compaction pass under way re-reads holds each turn and stops here
                retention.hold(hold, () -> floor);
            }
            return new Plan(journal.lastSeq(), floor, snapshots);
        });
        Path partial = to.resolveSibling(to.getFileName() + ".partial-" + UUID.randomUUID());
        try {
            try {
                SqliteJournal.createPrivately(partial);
            } catch (JournalException e) {
                if (!(e.getCause() instanceof java.nio.file.FileSystemException refusal) || !refusesNewFiles(refusal)) {
                    throw e; // a full disk or an I/O error is no fault of the target's name
                }
                throw new BackupTargetRefusedException(to + ": cannot create a file in " + to.getParent() + ": "
                        + WriterLock.reason(refusal) + "; name a --to in a directory this user can write."
                        + " Nothing was written.");
            }
            long rows;
            try (Connection out = DriverManager.getConnection("jdbc:sqlite:" + partial)) {
                try (Statement s = out.createStatement()) {
                    // a file nobody else sees until the rename: synced once at the end instead
                    s.execute("PRAGMA journal_mode=OFF");
                    s.execute("PRAGMA synchronous=OFF");
                }
                JournalSchema.create(out);
                copySnapshots(writer, store, plan, out);
                rows = copyRows(journal, writer, plan, out);
                finish(out, plan);
            }
            sync(partial);
            move(partial, to);
            Result result = new Result(to, plan.seq(), rows, plan.snapshots().size(), Files.size(to),
                    (System.nanoTime() - start) / 1e9, writer.longestNanos() / 1e6, throughHub);
            LOG.log(System.Logger.Level.INFO, "journal backup " + result.summary());
            return result;
        } catch (SQLException | IOException e) {
            throw new JournalException(to + ": backup failed, nothing was written there: " + e.getMessage(), e);
        } finally {
            deleteQuietly(partial);
            if (retention != null) {
                retention.release(hold);
            }
            store.unpin(plan.snapshots());
        }
    }

    private static void checkTarget(Path source, Path to) throws JournalException {
        if (Files.exists(to)) {
            throw new BackupTargetRefusedException(to + " exists; a backup never overwrites a file. Name a new one.");
        }
        if (to.equals(source) || to.getParent() == null || !Files.isDirectory(to.getParent())) {
            throw new BackupTargetRefusedException(to + ": not a new file in an existing directory");
        }
    }

    private static void copySnapshots(WriterAccess writer, SnapshotStore store, Plan plan, Connection out)
            throws JournalException, SQLException {
        for (SnapshotStore.Info info : plan.snapshots()) {
            try (PreparedStatement header = out.prepareStatement("INSERT INTO snapshots(id, seq, created_at, format,"
                    + " bytes, chunks, crc32c, complete) VALUES (?, ?, ?, ?, ?, ?, ?, 1)")) {
                header.setLong(1, info.id());
                header.setLong(2, info.seq());
                header.setDouble(3, info.createdAt());
                header.setInt(4, info.format());
                header.setLong(5, info.bytes());
                header.setInt(6, info.chunks());
                header.setLong(7, info.crc32c());
                header.executeUpdate();
            }
            try (PreparedStatement chunk = out.prepareStatement(
                    "INSERT INTO snapshot_chunks(snapshot_id, idx, data) VALUES (?, ?, ?)")) {
                for (int idx = 0; idx < info.chunks(); idx++) {
                    int i = idx;
                    byte[] data = writer.run(s -> store.readChunk(info.id(), i));
                    chunk.setLong(1, info.id());
                    chunk.setInt(2, idx);
                    chunk.setBytes(3, data);
                    chunk.executeUpdate();
                }
            }
        }
    }

    private static long copyRows(SqliteJournal journal, WriterAccess writer, Plan plan, Connection out)
            throws JournalException, SQLException {
        long copied = 0;
        long cursor = plan.floor();
        try (PreparedStatement insert = out.prepareStatement(
                "INSERT INTO events(seq, ts, kind, durability, payload) VALUES (?, ?, ?, ?, ?)");
             Statement tx = out.createStatement()) {
            while (cursor < plan.seq()) {
                long after = cursor;
                List<SqliteJournal.RawRow> rows = writer.run(s -> journal.readRaw(after, plan.seq(), ROWS_PER_TURN));
                if (rows.isEmpty()) {
                    break;
                }
                tx.execute("BEGIN");
                for (SqliteJournal.RawRow row : rows) {
                    insert.setLong(1, row.seq());
                    insert.setObject(2, row.ts());
                    insert.setObject(3, row.kind());
                    insert.setObject(4, row.durability());
                    insert.setObject(5, row.payload());
                    insert.executeUpdate();
                }
                tx.execute("COMMIT");
                copied += rows.size();
                cursor = rows.get(rows.size() - 1).seq();
            }
        }
        return copied;
    }

    /** The compaction floor and the sequence (so the copy numbers on after S even if S's row was compacted). */
    private static void finish(Connection out, Plan plan) throws SQLException {
        try (Statement s = out.createStatement()) {
            s.execute("DELETE FROM sqlite_sequence WHERE name = 'events'");
            s.execute("INSERT INTO sqlite_sequence(name, seq) VALUES ('events', " + plan.seq() + ")");
            if (plan.floor() > 0) {
                s.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('compacted_through', '" + plan.floor() + "')");
            }
        }
    }

    /**
     * Whether creating a file failed because of where it was asked for: no permission, a read-only
     * file system, or a directory that takes no new file (as {@code /proc} answers "no such file").
     */
    private static boolean refusesNewFiles(java.nio.file.FileSystemException e) {
        return e instanceof java.nio.file.AccessDeniedException || e instanceof java.nio.file.NoSuchFileException
                || e.getReason() != null && (e.getReason().contains("Read-only file system")
                || e.getReason().contains("Operation not permitted"));
    }

    private static void sync(Path file) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            ch.force(true);
        }
    }

    /** Puts the finished copy in place without ever replacing a file that appeared meanwhile. */
    private static void move(Path partial, Path to) throws IOException {
        try {
            Files.createLink(to, partial); // fails if the target exists: no clobbering
            Files.delete(partial);
        } catch (UnsupportedOperationException | java.nio.file.FileSystemException e) {
            if (e instanceof java.nio.file.FileAlreadyExistsException) {
                throw (java.nio.file.FileAlreadyExistsException) e;
            }
            Files.move(partial, to); // no hard links here: a plain move, which refuses an existing target
        }
        try (FileChannel dir = FileChannel.open(to.getParent(), StandardOpenOption.READ)) {
            dir.force(true); // the rename itself survives a power loss
        } catch (IOException ignored) {
            // not every file system lets a directory be synced; the file itself is
        }
    }

    private static void deleteQuietly(Path file) {
        try {
            Files.deleteIfExists(file);
            Files.deleteIfExists(file.resolveSibling(file.getFileName() + "-journal"));
        } catch (IOException ignored) {
            // best effort: a leftover .partial file is never taken for a journal
        }
    }
}
