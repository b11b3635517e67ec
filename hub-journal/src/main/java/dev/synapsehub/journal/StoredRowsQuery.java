package dev.synapsehub.journal;

import dev.synapsehub.core.journal.JournalException;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * The stored rows after a seq, undecoded, on one connection: the query behind serving a peer's
 * log pull (contract §11.1), for the writer's connection and a reader's alike. Not thread-safe:
 * one per reading thread (its statement and kind names are the connection's).
 */
final class StoredRowsQuery implements AutoCloseable {
    private final Path path;
    private final Connection connection;
    private final KindNames kinds = new KindNames();
    private PreparedStatement statement;

    StoredRowsQuery(Path path, Connection connection) {
        this.path = path;
        this.connection = connection;
    }

    /**
     * The rows with {@code seq > afterSeq}, every kind, in seq order: at most {@code maxEvents},
     * and no more once their payloads' UTF-8 bytes reach {@code maxBytes} (the first row always comes).
     */
    List<StoredEvent> read(long afterSeq, int maxEvents, long maxBytes) throws JournalException {
        List<StoredEvent> out = new ArrayList<>();
        if (maxEvents <= 0) {
            return out;
        }
        try {
            if (statement == null) {
                statement = connection.prepareStatement(
                        "SELECT seq, ts, kind, payload FROM events WHERE seq > ? ORDER BY seq LIMIT ?");
            }
            statement.setLong(1, afterSeq);
            statement.setInt(2, maxEvents);
            long bytes = 0;
            try (ResultSet rs = statement.executeQuery()) {
                while (rs.next()) {
                    // the stored UTF-8 as is: a page is copied to the frame without a String per row
                    byte[] payload = rs.getBytes(4);
                    bytes += payload == null ? 0 : payload.length;
                    if (!out.isEmpty() && bytes > maxBytes) {
                        break;
                    }
                    // the kind's bytes, not getString: one String per distinct kind, not a decode per row
                    out.add(new StoredEvent(rs.getLong(1), rs.getDouble(2), kinds.of(rs.getBytes(3)), payload));
                }
            }
        } catch (SQLException e) {
            throw new JournalException(path + ": read of stored rows after seq " + afterSeq + " failed: "
                    + e.getMessage(), e);
        }
        return out;
    }

    @Override
    public void close() throws SQLException {
        if (statement != null) {
            statement.close();
        }
    }
}
