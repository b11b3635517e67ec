package dev.synapsehub.journal;

import dev.synapsehub.core.journal.JournalException;
import dev.synapsehub.core.journal.JournalReader;
import dev.synapsehub.core.journal.JournaledEvent;
import org.sqlite.SQLiteConfig;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Set;

/**
 * A second, read-only SQLite connection on the journal file (WAL lets it read committed rows
 * while the writer appends), for historical reads on a thread of their own: decoded ranges
 * (mailbox replay, acks) and stored rows as they are (a peer's log pull). Not thread-safe: one
 * reading thread.
 */
public final class SqliteJournalReader implements JournalReader {
    private final Path path;
    private final Connection connection;
    private final EventRangeQuery query;
    private final StoredRowsQuery storedRows;
    private boolean closed;

    private SqliteJournalReader(Path path, Connection connection) {
        this.path = path;
        this.connection = connection;
        this.query = new EventRangeQuery(path, connection);
        this.storedRows = new StoredRowsQuery(path, connection);
    }

    /** Opens a read-only connection on the journal at {@code path} (which the writer already opened). */
    static SqliteJournalReader open(Path path) throws JournalException {
        return new SqliteJournalReader(path, readOnlyConnection(path));
    }

    /** A read-only connection on the journal at {@code path}, waiting up to 5 s on a lock. */
    static Connection readOnlyConnection(Path path) throws JournalException {
        SQLiteConfig config = new SQLiteConfig();
        config.setReadOnly(true);
        config.setBusyTimeout(5_000);
        try {
            return config.createConnection("jdbc:sqlite:" + path);
        } catch (SQLException e) {
            throw new JournalException(path + ": cannot open a journal reader: " + e.getMessage(), e);
        }
    }

    @Override
    public List<JournaledEvent> readAfter(long afterSeq, int limit, Set<String> kinds) throws JournalException {
        ensureOpen();
        return query.readAfter(afterSeq, limit, kinds);
    }

    /** As {@link SqliteJournal#readStored}, on this connection: committed rows only. */
    public List<StoredEvent> readStored(long afterSeq, int maxEvents, long maxBytes) throws JournalException {
        ensureOpen();
        return storedRows.read(afterSeq, maxEvents, maxBytes);
    }

    /** As {@link SqliteJournal#compactedThrough}, on this connection. */
    public long compactedThrough() throws JournalException {
        ensureOpen();
        try (java.sql.Statement s = connection.createStatement();
             java.sql.ResultSet rs = s.executeQuery("SELECT value FROM meta WHERE key = 'compacted_through'")) {
            return rs.next() ? Long.parseLong(rs.getString(1)) : 0L;
        } catch (SQLException | NumberFormatException e) {
            throw new JournalException(path + ": reading compacted_through failed: " + e.getMessage(), e);
        }
    }

    private void ensureOpen() throws JournalException {
        if (closed) {
            throw new JournalException(path + ": the journal reader is closed");
        }
    }

    @Override
    public void close() throws JournalException {
        if (closed) {
            return;
        }
        closed = true;
        try {
            query.close();
            storedRows.close();
            connection.close();
        } catch (SQLException e) {
            throw new JournalException(path + ": closing the journal reader failed: " + e.getMessage(), e);
        }
    }
}
