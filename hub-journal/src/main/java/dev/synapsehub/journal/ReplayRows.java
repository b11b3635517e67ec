package dev.synapsehub.journal;

import dev.synapsehub.core.event.CoordinationEvent;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Optional;

/**
 * A batch of journal rows on their way through a replay: read from SQLite (the stored bytes,
 * no {@code String} per payload), then decoded, then applied in seq order. The same batch object
 * goes round the stages again once applied, so a replay allocates no arrays per row.
 */
final class ReplayRows {
    final long[] seq;
    final double[] ts;
    final boolean[] tsMissing;
    final String[] kind;
    final byte[][] payload;
    /** The payload as text, read only when it has no bytes (an SQL NULL reads null both ways). */
    final String[] text;
    /** The decoded event; null for an unknown kind or a corrupt row. */
    final CoordinationEvent[] event;
    /** Why a row is corrupt; null when it decoded or its kind is unknown. */
    final String[] fault;
    int size;
    /** True on the batch that holds the last rows (possibly none). */
    boolean last;
    /** A read or decode that failed outright: the caller rethrows it after the rows before it. */
    Exception failure;

    /** The kinds' text, one {@code String} per distinct kind (a batch is read on one thread at a time). */
    private final KindNames kinds = new KindNames();

    ReplayRows(int capacity) {
        seq = new long[capacity];
        ts = new double[capacity];
        tsMissing = new boolean[capacity];
        kind = new String[capacity];
        payload = new byte[capacity][];
        text = new String[capacity];
        event = new CoordinationEvent[capacity];
        fault = new String[capacity];
    }

    int capacity() {
        return seq.length;
    }

    /**
     * Reads up to {@link #capacity()} rows of {@code SELECT seq, ts, kind, payload}; sets {@link #last}
     * at the end. A failed read keeps the rows read before the failing one in {@link #size}.
     */
    void read(ResultSet rs) throws SQLException {
        clear();
        int n = 0;
        boolean more = true;
        try {
            while (n < seq.length && (more = rs.next())) {
                seq[n] = rs.getLong(1);
                ts[n] = rs.getDouble(2);
                tsMissing[n] = rs.wasNull();
                kind[n] = kinds.of(rs.getBytes(3)); // not getString: a decode per row (KindNames)
                byte[] bytes = rs.getBytes(4);
                payload[n] = bytes;
                text[n] = bytes == null ? rs.getString(4) : null;
                n++;
            }
        } finally {
            size = n;
        }
        last = !more;
    }

    /** Ends the replay with {@code e}, after the rows this batch holds. */
    void fail(Throwable e) {
        last = true;
        failure = e instanceof Exception ex ? ex : new RuntimeException(e);
    }

    /** Decodes every row read; a corrupt row gets its {@link #fault}, the others their event. */
    void decode(EventCodec codec) {
        for (int i = 0; i < size; i++) {
            try {
                Optional<CoordinationEvent> decoded = decodeRow(codec, i);
                event[i] = decoded.orElse(null);
            } catch (EventCodec.CorruptPayloadException e) {
                fault[i] = "is corrupt and was not replayed: " + e.getMessage();
            }
        }
    }

    private Optional<CoordinationEvent> decodeRow(EventCodec codec, int i) throws EventCodec.CorruptPayloadException {
        if (kind[i] == null) {
            throw new EventCodec.CorruptPayloadException("the row has no kind");
        }
        if (tsMissing[i] || !Double.isFinite(ts[i])) {
            throw new EventCodec.CorruptPayloadException("the row has no finite ts");
        }
        return payload[i] != null ? codec.decode(kind[i], ts[i], payload[i]) : codec.decode(kind[i], ts[i], text[i]);
    }

    /** Drops the references of the previous round (events and payloads are not kept alive by the pool). */
    private void clear() {
        for (int i = 0; i < size; i++) {
            kind[i] = null;
            payload[i] = null;
            text[i] = null;
            event[i] = null;
            fault[i] = null;
        }
        size = 0;
        last = false;
        failure = null;
    }
}
