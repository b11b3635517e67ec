package dev.synapsehub.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * A database as another v2 hub writes it, built by hand from the wire contract §12.2 (tables)
 * and §12.4 (payload shapes), for the import tests.
 */
final class ReferenceDb implements AutoCloseable {
    static final ObjectMapper JSON = new ObjectMapper();
    private final Connection c;

    ReferenceDb(Path file) throws SQLException {
        c = DriverManager.getConnection("jdbc:sqlite:" + file);
        try (Statement s = c.createStatement()) {
            s.execute("PRAGMA journal_mode=WAL");
            s.execute("CREATE TABLE events (seq INTEGER PRIMARY KEY AUTOINCREMENT, ts REAL NOT NULL, kind TEXT NOT NULL,"
                    + " payload TEXT NOT NULL)");
            s.execute("CREATE TABLE operations (operation_key TEXT PRIMARY KEY, request_digest TEXT, response_json TEXT,"
                    + " response_sha256 TEXT, first_event_seq INTEGER, commit_seq INTEGER, committed_at REAL)");
            s.execute("CREATE TABLE operation_outbox (operation_key TEXT PRIMARY KEY, intent_json TEXT, receipt_id TEXT)");
            s.execute("CREATE TABLE delivery_receipts (message_seq INTEGER PRIMARY KEY, sender TEXT, target TEXT,"
                    + " message_id INTEGER, client_msg_id TEXT, state TEXT, delivered INTEGER NULL, deferred INTEGER,"
                    + " acked_by TEXT, updated_event_seq INTEGER)");
            s.execute("CREATE TABLE delivery_receipt_outbox (notification_id TEXT PRIMARY KEY, message_seq INTEGER,"
                    + " phase TEXT, sender TEXT, frame_json TEXT, attempts INTEGER DEFAULT 0, delivered_at REAL NULL)");
            s.execute("CREATE INDEX delivery_receipt_outbox_sender ON delivery_receipt_outbox(sender, delivered_at)");
        }
    }

    /** Appends an event row with the next seq; the payload is stored as given (it may be odd on purpose). */
    ReferenceDb event(double ts, String kind, String payload) throws SQLException {
        try (PreparedStatement p = c.prepareStatement("INSERT INTO events(ts, kind, payload) VALUES (?, ?, ?)")) {
            p.setDouble(1, ts);
            p.setString(2, kind);
            p.setString(3, payload);
            p.executeUpdate();
        }
        return this;
    }

    /** Appends an event whose payload is a JSON object, stored compact (the reference escapes non-ASCII). */
    ReferenceDb event(double ts, String kind, ObjectNode payload) throws Exception {
        return event(ts, kind, JSON.writer().with(com.fasterxml.jackson.core.json.JsonWriteFeature.ESCAPE_NON_ASCII)
                .writeValueAsString(payload));
    }

    /** A claim snapshot payload (§12.4) with the members every hub writes. */
    static ObjectNode claim(String task, String owner, long epoch, long version, double claimedAt, double expiresAt,
            String checkpoint, String... paths) {
        ObjectNode o = JSON.createObjectNode();
        o.put("task_id", task);
        o.put("owner", owner);
        o.put("note", "");
        o.put("claimed_at", claimedAt);
        o.put("lease_expires_at", expiresAt);
        o.put("status", "claimed");
        o.put("data_ref", "");
        o.put("worktree", "");
        o.putArray("paths").addAll(java.util.Arrays.stream(paths).map(JSON.getNodeFactory()::textNode).toList());
        o.put("epoch", epoch);
        o.put("version", version);
        o.put("checkpoint", checkpoint);
        o.putNull("git");
        o.put("quota_principal", "open-host:127.0.0.1");
        return o;
    }

    /** Runs any SQL (side tables). */
    ReferenceDb sql(String statement) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute(statement);
        }
        return this;
    }

    @Override
    public void close() throws SQLException {
        c.close();
    }
}
