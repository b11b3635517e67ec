package dev.synapsehub.journal;

import dev.synapsehub.core.journal.JournalException;
import dev.synapsehub.core.journal.JournaledEvent;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The bounded range scan behind {@code readAfter}: the first {@code limit} events with
 * {@code seq > afterSeq} of the given kinds, over the primary key (chat alone: over the partial
 * index of chat rows, schema version 3) with a prepared statement per kind set (at most 16 kept). Undecodable rows are skipped with a warning (replay reports them).
 * Confined to the thread that uses its connection.
 */
final class EventRangeQuery implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(EventRangeQuery.class.getName());
    private static final int MAX_STATEMENTS = 16;

    private final Path path;
    private final Connection connection;
    private final EventCodec codec = new EventCodec();
    private final Map<String, PreparedStatement> statements = new HashMap<>();

    EventRangeQuery(Path path, Connection connection) {
        this.path = path;
        this.connection = connection;
    }

    List<JournaledEvent> readAfter(long afterSeq, int limit, Set<String> kinds) throws JournalException {
        if (limit <= 0 || kinds.isEmpty()) {
            return List.of();
        }
        List<String> sorted = new ArrayList<>(new TreeSet<>(kinds));
        List<JournaledEvent> out = new ArrayList<>();
        try {
            PreparedStatement q = statement(sorted);
            q.setLong(1, afterSeq);
            for (int i = 0; i < sorted.size(); i++) {
                q.setString(2 + i, sorted.get(i));
            }
            q.setInt(2 + sorted.size(), limit);
            try (ResultSet rs = q.executeQuery()) {
                while (rs.next()) {
                    long seq = rs.getLong(1);
                    try {
                        codec.decode(rs.getString(3), rs.getDouble(2), rs.getString(4))
                                .ifPresent(e -> out.add(new JournaledEvent(seq, e)));
                    } catch (EventCodec.CorruptPayloadException e) {
                        LOG.log(System.Logger.Level.WARNING, "journal row seq=" + seq + " skipped in a read: "
                                + e.getMessage());
                    }
                }
            }
        } catch (SQLException e) {
            throw new JournalException(path + ": read after seq " + afterSeq + " failed: " + e.getMessage(), e);
        }
        return out;
    }

    private PreparedStatement statement(List<String> sortedKinds) throws SQLException {
        String key = String.join(",", sortedKinds);
        PreparedStatement q = statements.get(key);
        if (q == null) {
            if (statements.size() >= MAX_STATEMENTS) {
                closeStatements();
            }
            q = connection.prepareStatement(sql(sortedKinds));
            statements.put(key, q);
        }
        return q;
    }

    /**
     * The range query for {@code sortedKinds}. Chat alone (mailbox replay, acks) names the kind
     * literally too: only then can SQLite use the partial index of chat rows (a bound parameter
     * cannot prove the index's condition); the bound {@code ?} still matches it. The partition
     * audit kinds (read at every start) name theirs literally for their index the same way.
     */
    static String sql(List<String> sortedKinds) {
        String marks = String.join(",", Collections.nCopies(sortedKinds.size(), "?"));
        String chatOnly = sortedKinds.equals(List.of("chat")) ? " AND kind = 'chat'"
                : sortedKinds.equals(JournalSchema.PARTITION_KINDS) ? " AND " + JournalSchema.PARTITION_CONDITION : "";
        return "SELECT seq, ts, kind, payload FROM events WHERE seq > ? AND kind IN (" + marks + ")" + chatOnly
                + " ORDER BY seq LIMIT ?";
    }

    private void closeStatements() throws SQLException {
        for (PreparedStatement old : statements.values()) {
            old.close();
        }
        statements.clear();
    }

    /** Closes the statements (not the connection, which is its owner's). */
    @Override
    public void close() throws SQLException {
        closeStatements();
    }
}
