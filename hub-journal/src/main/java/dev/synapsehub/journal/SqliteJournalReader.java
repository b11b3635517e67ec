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
 * while the writer appends), for historical reads on a thread of their own.
 */
final class SqliteJournalReader implements JournalReader {
    private final Path path;
    private final Connection connection;
    private final EventRangeQuery query;
    private boolean closed;

    private SqliteJournalReader(Path path, Connection connection) {
        this.path = path;
        this.connection = connection;
        this.query = new EventRangeQuery(path, connection);
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
        if (closed) {
            throw new JournalException(path + ": the journal reader is closed");
        }
        return query.readAfter(afterSeq, limit, kinds);
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
            throw new JournalException(path + ": closing the journal reader failed: " + e.getMessage(), e);
        }
    }
}
