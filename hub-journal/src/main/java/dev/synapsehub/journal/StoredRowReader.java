package dev.synapsehub.journal;

import dev.synapsehub.core.journal.JournalException;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;

/**
 * A read-only connection on the journal that serves peers' log pulls off the writer thread: WAL
 * lets it read committed rows while the writer appends, so a catch-up of a million rows no
 * longer holds the writer for a page read at a time. Not thread-safe: one reading thread.
 */
public final class StoredRowReader implements AutoCloseable {
    private final Path path;
    private final Connection connection;
    private final StoredRowsQuery query;
    private boolean closed;

    private StoredRowReader(Path path, Connection connection) {
        this.path = path;
        this.connection = connection;
        this.query = new StoredRowsQuery(path, connection);
    }

    /** Opens a read-only connection on the journal at {@code path} (which the writer already opened). */
    static StoredRowReader open(Path path) throws JournalException {
        return new StoredRowReader(path, SqliteJournalReader.readOnlyConnection(path));
    }

    /** As {@link SqliteJournal#readStored}: committed rows only. */
    public List<StoredEvent> readStored(long afterSeq, int maxEvents, long maxBytes) throws JournalException {
        if (closed) {
            throw new JournalException(path + ": the journal's row reader is closed");
        }
        return query.read(afterSeq, maxEvents, maxBytes);
    }

    @Override
    public void close() throws JournalException {
        if (closed) {
            return;
        }
        closed = true;
        try {
            query.close();
            connection.close();
        } catch (SQLException e) {
            throw new JournalException(path + ": closing the journal's row reader failed: " + e.getMessage(), e);
        }
    }
}
