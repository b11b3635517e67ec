package dev.synapsehub.mesh;

import dev.synapsehub.core.state.StateImage;
import dev.synapsehub.journal.CorruptSnapshotException;
import dev.synapsehub.journal.SnapshotCodec;
import dev.synapsehub.journal.StateSnapshot;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import com.fasterxml.jackson.databind.JsonNode;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.journal.JournaledEvent;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.zip.CRC32C;

/**
 * The bytes of a mesh snapshot file: magic {@code SYNMSNAP}, format, the Raft position it
 * covers (term, index), the highest origin seq seen per node, the decided intents (format 2:
 * what a leader answers a write whose intent id committed already), then the coordination state as
 * hub-journal's {@link SnapshotCodec} body, and a CRC-32C of everything before it. Reading is
 * strict: anything that does not check out is a {@link CorruptSnapshotException}.
 *
 * @param term the Raft term of the entry at {@code index}
 * @param index the log index of the last record the state holds
 * @param createdAt the capturing node's clock, Unix seconds (informational)
 * @param originSeqs per origin node, the highest origin seq of its records at or before {@code index}
 * @param image the coordination state
 * @param intents the decisions of the last committed intent ids, oldest first (none in format 1)
 */
record MeshSnapshotFile(long term, long index, double createdAt, Map<String, Long> originSeqs, StateImage image,
                        Map<String, DecidedIntents.Decided> intents) {
    private static final byte[] MAGIC = "SYNMSNAP".getBytes(StandardCharsets.US_ASCII);
    /** Format 2 adds the decided intents; format 1 files are still read (with none). */
    private static final int FORMAT = 2;
    private static final EventsJson EVENTS = new EventsJson();

    MeshSnapshotFile {
        originSeqs = Collections.unmodifiableMap(new TreeMap<>(originSeqs));
        intents = Collections.unmodifiableMap(new LinkedHashMap<>(intents));
    }

    /** A snapshot without decided intents. */
    MeshSnapshotFile(long term, long index, double createdAt, Map<String, Long> originSeqs, StateImage image) {
        this(term, index, createdAt, originSeqs, image, Map.of());
    }

    byte[] encode() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.write(MAGIC);
            out.writeInt(FORMAT);
            out.writeLong(term);
            out.writeLong(index);
            out.writeDouble(createdAt);
            out.writeInt(originSeqs.size());
            for (Map.Entry<String, Long> e : originSeqs.entrySet()) {
                out.writeUTF(e.getKey());
                out.writeLong(e.getValue());
            }
            out.writeInt(intents.size());
            for (Map.Entry<String, DecidedIntents.Decided> e : intents.entrySet()) {
                out.writeUTF(e.getKey());
                byte[] decided = MeshJson.bytes(decidedJson(e.getValue()));
                out.writeInt(decided.length);
                out.write(decided);
            }
            byte[] body = SnapshotCodec.encode(new StateSnapshot(createdAt, 0, 0, image));
            out.writeInt(body.length);
            out.write(body);
            out.flush();
            out.writeLong(crc(bytes.toByteArray(), bytes.size()));
        } catch (IOException e) {
            throw new IllegalStateException("cannot write to memory", e);
        }
        return bytes.toByteArray();
    }

    static MeshSnapshotFile decode(byte[] data) throws CorruptSnapshotException {
        if (data.length < MAGIC.length + 8) {
            throw new CorruptSnapshotException("the file is too short (" + data.length + " bytes)");
        }
        long stored = 0;
        for (int i = data.length - 8; i < data.length; i++) {
            stored = (stored << 8) | (data[i] & 0xFF);
        }
        if (stored != crc(data, data.length - 8)) {
            throw new CorruptSnapshotException("checksum mismatch");
        }
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(data, 0, data.length - 8))) {
            if (!Arrays.equals(in.readNBytes(MAGIC.length), MAGIC)) {
                throw new CorruptSnapshotException("not a mesh snapshot (bad magic)");
            }
            int format = in.readInt();
            if (format != 1 && format != FORMAT) {
                throw new CorruptSnapshotException("mesh snapshot format " + format + " is not 1 or " + FORMAT);
            }
            long term = in.readLong();
            long index = in.readLong();
            double createdAt = in.readDouble();
            int n = in.readInt();
            if (n < 0 || n > 100_000) {
                throw new CorruptSnapshotException("implausible origin count " + n);
            }
            Map<String, Long> origins = new LinkedHashMap<>();
            for (int i = 0; i < n; i++) {
                origins.put(in.readUTF(), in.readLong());
            }
            Map<String, DecidedIntents.Decided> intents = new LinkedHashMap<>();
            if (format >= 2) {
                int count = in.readInt();
                if (count < 0 || count > 1_000_000) {
                    throw new CorruptSnapshotException("implausible intent count " + count);
                }
                for (int i = 0; i < count; i++) {
                    String id = in.readUTF();
                    int size = in.readInt();
                    if (size < 0 || size > in.available()) {
                        throw new CorruptSnapshotException("intent " + i + " runs past the end of the file");
                    }
                    try {
                        intents.put(id, decided(MeshJson.tree(in.readNBytes(size))));
                    } catch (IllegalArgumentException e) {
                        throw new CorruptSnapshotException("unreadable decided intent " + i + ": " + e.getMessage(), e);
                    }
                }
            }
            int length = in.readInt();
            if (length < 0 || length != in.available()) {
                throw new CorruptSnapshotException("the state body does not end where the file does");
            }
            StateSnapshot state = SnapshotCodec.decode(in.readNBytes(length));
            if (term < 0 || index < 0) {
                throw new CorruptSnapshotException("negative term or index");
            }
            return new MeshSnapshotFile(term, index, createdAt, origins, state.image(), intents);
        } catch (IOException e) {
            throw new CorruptSnapshotException("unreadable mesh snapshot: " + e, e);
        }
    }

    private static com.fasterxml.jackson.databind.node.ObjectNode decidedJson(DecidedIntents.Decided d) {
        com.fasterxml.jackson.databind.node.ObjectNode o = MeshJson.MAPPER.createObjectNode();
        o.set("reply", d.reply());
        if (d.storedResponse() != null) {
            o.put("stored", d.storedResponse());
        }
        o.put("firstSeq", d.committed().isEmpty() ? 0 : d.committed().get(0).seq());
        List<CoordinationEvent> events = new ArrayList<>();
        d.committed().forEach(e -> events.add(e.event()));
        o.set("events", EVENTS.write(events));
        return o;
    }

    private static DecidedIntents.Decided decided(JsonNode o) {
        List<CoordinationEvent> events = EVENTS.read(o.get("events"));
        long first = o.path("firstSeq").asLong();
        List<JournaledEvent> committed = new ArrayList<>(events.size());
        for (int i = 0; i < events.size(); i++) {
            committed.add(new JournaledEvent(first + i, events.get(i)));
        }
        JsonNode stored = o.get("stored");
        JsonNode reply = o.get("reply");
        if (reply == null || reply.isNull()) {
            throw new IllegalArgumentException("no reply");
        }
        return new DecidedIntents.Decided(reply, stored == null || stored.isNull() ? null : stored.asText(), committed);
    }

    private static long crc(byte[] data, int length) {
        CRC32C crc = new CRC32C();
        crc.update(data, 0, length);
        return crc.getValue();
    }
}
