package dev.synapsehub.journal;

import dev.synapsehub.core.event.Durability;
import dev.synapsehub.core.journal.JournalException;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * State snapshots stored in the journal file (schema version 2, see {@link JournalSchema}).
 *
 * <p>A snapshot is written as a header row ({@link #begin}, not yet complete), chunk rows
 * ({@link #writeChunk}, each a short transaction of its own, so the writer is never held for
 * the whole body) and a last transaction ({@link #complete}, {@code synchronous=FULL}) that
 * records length, chunk count and CRC-32C and marks it complete. Only complete snapshots are
 * listed or read; one cut short by a crash stays incomplete and is discarded at the next start
 * ({@link #discardIncomplete}). Every method runs on the journal's writer thread (the actor, or
 * start-up before it), like appends.
 */
public final class SnapshotStore {
    /** Bytes per chunk row: a chunk is written in a few milliseconds. */
    public static final int CHUNK_BYTES = 1 << 20;

    /**
     * One complete stored snapshot.
     *
     * @param seq the journal seq the state covers
     * @param createdAt hub time it was taken
     * @param bytes body length
     * @param crc32c CRC-32C of the body
     */
    public record Info(long id, long seq, double createdAt, int format, long bytes, int chunks, long crc32c) {
    }

    private final SqliteJournal journal;
    /** Snapshots a backup is copying: rotation leaves them alone until released. */
    private final java.util.Set<Long> pinned = java.util.concurrent.ConcurrentHashMap.newKeySet();

    SnapshotStore(SqliteJournal journal) {
        this.journal = journal;
    }

    /** Starts a snapshot covering {@code seq}; returns its id. */
    public long begin(long seq, double createdAt) throws JournalException {
        return journal.transaction(Durability.NORMAL, "starting a snapshot", c -> {
            try (PreparedStatement q = c.prepareStatement("INSERT INTO snapshots(seq, created_at, format, bytes, chunks,"
                    + " crc32c, complete) VALUES (?, ?, ?, 0, 0, 0, 0)")) {
                q.setLong(1, seq);
                q.setDouble(2, createdAt);
                q.setInt(3, SnapshotCodec.FORMAT);
                q.executeUpdate();
            }
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT last_insert_rowid()")) {
                rs.next();
                return rs.getLong(1);
            }
        });
    }

    /** Writes chunk {@code idx} of snapshot {@code id}. */
    public void writeChunk(long id, int idx, byte[] data) throws JournalException {
        // synced chunk by chunk: the final FULL commit would otherwise sync the whole body at once,
        // holding the writer for the time it takes to flush tens of megabytes
        journal.transaction(Durability.FULL, "writing snapshot chunk", c -> {
            try (PreparedStatement q = c.prepareStatement(
                    "INSERT INTO snapshot_chunks(snapshot_id, idx, data) VALUES (?, ?, ?)")) {
                q.setLong(1, id);
                q.setInt(2, idx);
                q.setBytes(3, data);
                return q.executeUpdate();
            }
        });
    }

    /** Marks snapshot {@code id} complete: from here on it is listed and may be loaded. */
    public void complete(long id, long bytes, int chunks, long crc32c) throws JournalException {
        journal.transaction(Durability.FULL, "completing a snapshot", c -> {
            try (PreparedStatement q = c.prepareStatement(
                    "UPDATE snapshots SET bytes = ?, chunks = ?, crc32c = ?, complete = 1 WHERE id = ?")) {
                q.setLong(1, bytes);
                q.setInt(2, chunks);
                q.setLong(3, crc32c);
                q.setLong(4, id);
                return q.executeUpdate();
            }
        });
    }

    /** Complete snapshots, newest first (highest seq, then highest id). */
    public List<Info> list() throws JournalException {
        return list(journal::query);
    }

    /** Runs SQL on a connection: the journal's own, or a reader's ({@link SnapshotReadAhead}). */
    interface Sql {
        <T> T query(String what, SqliteJournal.SqlWork<T> work) throws JournalException;
    }

    /** As {@link #list()}, through {@code sql}. */
    static List<Info> list(Sql sql) throws JournalException {
        return sql.query("listing snapshots", c -> {
            List<Info> out = new ArrayList<>();
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT id, seq, created_at, format,"
                    + " bytes, chunks, crc32c FROM snapshots WHERE complete = 1 ORDER BY seq DESC, id DESC")) {
                while (rs.next()) {
                    out.add(new Info(rs.getLong(1), rs.getLong(2), rs.getDouble(3), rs.getInt(4), rs.getLong(5),
                            rs.getInt(6), rs.getLong(7)));
                }
            }
            return out;
        });
    }

    /** Number of snapshots a crash left incomplete. */
    public int incomplete() throws JournalException {
        return journal.query("counting incomplete snapshots", c -> {
            try (Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM snapshots WHERE complete = 0")) {
                rs.next();
                return rs.getInt(1);
            }
        });
    }

    /** Deletes the snapshots a crash left incomplete, with their chunks; returns how many. */
    public int discardIncomplete() throws JournalException {
        return journal.transaction(Durability.NORMAL, "discarding incomplete snapshots", c -> {
            try (Statement s = c.createStatement()) {
                s.executeUpdate("DELETE FROM snapshot_chunks WHERE snapshot_id IN"
                        + " (SELECT id FROM snapshots WHERE complete = 0)");
                return s.executeUpdate("DELETE FROM snapshots WHERE complete = 0");
            }
        });
    }

    /**
     * The body of a complete snapshot, checked against its recorded chunk count, length and
     * CRC-32C.
     *
     * @throws CorruptSnapshotException when a chunk is missing or the body does not match
     */
    public byte[] read(Info info) throws JournalException, CorruptSnapshotException {
        return read(journal::query, info);
    }

    /** As {@link #read(Info)}, through {@code sql}. */
    static byte[] read(Sql sql, Info info) throws JournalException, CorruptSnapshotException {
        if (info.format() < SnapshotCodec.OLDEST_FORMAT || info.format() > SnapshotCodec.FORMAT) {
            throw new CorruptSnapshotException("format " + info.format() + " is not " + SnapshotCodec.OLDEST_FORMAT
                    + " to " + SnapshotCodec.FORMAT);
        }
        if (info.bytes() > Integer.MAX_VALUE - 16 || info.bytes() > (long) info.chunks() * CHUNK_BYTES) {
            throw new CorruptSnapshotException("recorded length " + info.bytes() + " does not fit its "
                    + info.chunks() + " chunk(s)");
        }
        byte[] bytes = new byte[(int) Math.max(0, info.bytes())]; // filled in place: no growing copies of a large body
        long[] filled = {0};
        int chunks = sql.query("reading a snapshot", c -> {
            int n = 0;
            try (PreparedStatement q = c.prepareStatement(
                    "SELECT idx, data FROM snapshot_chunks WHERE snapshot_id = ? ORDER BY idx")) {
                q.setLong(1, info.id());
                try (ResultSet rs = q.executeQuery()) {
                    while (rs.next()) {
                        if (rs.getInt(1) != n) {
                            return -1 - n; // a gap: chunk n is missing
                        }
                        byte[] data = rs.getBytes(2);
                        int len = data == null ? 0 : data.length;
                        if (filled[0] + len <= bytes.length) {
                            System.arraycopy(data == null ? new byte[0] : data, 0, bytes, (int) filled[0], len);
                        }
                        filled[0] += len;
                        n++;
                    }
                }
            }
            return n;
        });
        if (chunks < 0) {
            throw new CorruptSnapshotException("chunk " + (-1 - chunks) + " is missing");
        }
        if (chunks != info.chunks() || filled[0] != info.bytes()) {
            throw new CorruptSnapshotException("holds " + chunks + " chunks, " + filled[0] + " bytes; recorded "
                    + info.chunks() + " chunks, " + info.bytes() + " bytes");
        }
        long crc = SnapshotCodec.crc32c(bytes);
        if (crc != info.crc32c()) {
            throw new CorruptSnapshotException("CRC-32C " + Long.toHexString(crc) + " does not match the recorded "
                    + Long.toHexString(info.crc32c()));
        }
        return bytes;
    }

    /** Keeps rotation from deleting these snapshots (a backup copies them). */
    void pin(List<Info> snapshots) {
        for (Info info : snapshots) {
            pinned.add(info.id());
        }
    }

    /** Lets rotation delete them again. */
    void unpin(List<Info> snapshots) {
        for (Info info : snapshots) {
            pinned.remove(info.id());
        }
    }

    /** True while a backup copies the snapshot. */
    boolean pinned(long id) {
        return pinned.contains(id);
    }

    /** One chunk's bytes (a backup copies a body a chunk per writer turn). */
    byte[] readChunk(long id, int idx) throws JournalException {
        return journal.query("reading a snapshot chunk", c -> {
            try (PreparedStatement q = c.prepareStatement(
                    "SELECT data FROM snapshot_chunks WHERE snapshot_id = ? AND idx = ?")) {
                q.setLong(1, id);
                q.setInt(2, idx);
                try (ResultSet rs = q.executeQuery()) {
                    if (!rs.next()) {
                        throw new java.sql.SQLException("snapshot " + id + " has no chunk " + idx);
                    }
                    return rs.getBytes(1);
                }
            }
        });
    }

    /** Marks a snapshot incomplete: no longer listed or loaded, discarded at the next start if not deleted before. */
    public void retire(long id) throws JournalException {
        journal.transaction(Durability.NORMAL, "retiring a snapshot", c -> {
            try (PreparedStatement q = c.prepareStatement("UPDATE snapshots SET complete = 0 WHERE id = ?")) {
                q.setLong(1, id);
                return q.executeUpdate();
            }
        });
    }

    /** Deletes one chunk of a snapshot (rotation frees a large body a chunk per transaction). */
    public void deleteChunk(long id, int idx) throws JournalException {
        journal.transaction(Durability.NORMAL, "deleting a snapshot chunk", c -> {
            try (PreparedStatement q = c.prepareStatement("DELETE FROM snapshot_chunks WHERE snapshot_id = ? AND idx = ?")) {
                q.setLong(1, id);
                q.setInt(2, idx);
                return q.executeUpdate();
            }
        });
    }

    /** Deletes a snapshot and its chunks. */
    public void delete(long id) throws JournalException {
        journal.transaction(Durability.NORMAL, "deleting a snapshot", c -> {
            try (PreparedStatement chunks = c.prepareStatement("DELETE FROM snapshot_chunks WHERE snapshot_id = ?");
                 PreparedStatement header = c.prepareStatement("DELETE FROM snapshots WHERE id = ?")) {
                chunks.setLong(1, id);
                chunks.executeUpdate();
                header.setLong(1, id);
                return header.executeUpdate();
            }
        });
    }
}
