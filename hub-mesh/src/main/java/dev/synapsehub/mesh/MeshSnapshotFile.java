package dev.synapsehub.mesh;

import dev.synapsehub.core.governance.NamespaceGovernance;
import dev.synapsehub.core.governance.Partition;
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
 * what a leader answers a write whose intent id committed already; format 3 adds each id's
 * origin, record index, place in its record's batch and whether it is pinned past the window,
 * every origin's hold and
 * forgotten mark: what decides which ids may be forgotten; format 4 adds the governance: the
 * unresolved namespace partitions and the quarantined peers, which a node that installs the
 * snapshot cannot read back from its journal copy), then the coordination state as
 * hub-journal's {@link SnapshotCodec} body, and a CRC-32C of everything before it. Reading is
 * strict: anything that does not check out is a {@link CorruptSnapshotException}.
 *
 * @param term the Raft term of the entry at {@code index}
 * @param index the log index of the last record the state holds
 * @param createdAt the capturing node's clock, Unix seconds (informational)
 * @param originSeqs per origin node, the highest origin seq of its records at or before {@code index}
 * @param image the coordination state
 * @param memory the remembered intent ids (none in format 1; of unknown origin and index in format 2)
 */
record MeshSnapshotFile(long term, long index, double createdAt, Map<String, Long> originSeqs, StateImage image,
                        DecidedIntents.Memory memory) {
    private static final byte[] MAGIC = "SYNMSNAP".getBytes(StandardCharsets.US_ASCII);
    /**
     * Format 4 adds the governance (partitions, quarantines; older files are read without any);
     * format 3 adds each id's origin, index, place in its batch and pin, and the origins' holds
     * and forgotten marks;
     * format 2 files are read with ids of unknown origin (forgotten past the window, as before),
     * format 1 files with none.
     */
    private static final int FORMAT = 4;
    private static final EventsJson EVENTS = new EventsJson();

    MeshSnapshotFile {
        originSeqs = Collections.unmodifiableMap(new TreeMap<>(originSeqs));
        memory = memory == null ? DecidedIntents.Memory.EMPTY : memory;
    }

    /** A snapshot without decided intents. */
    MeshSnapshotFile(long term, long index, double createdAt, Map<String, Long> originSeqs, StateImage image) {
        this(term, index, createdAt, originSeqs, image, DecidedIntents.Memory.EMPTY);
    }

    /** A snapshot with decided intents of unknown origin and index, oldest first (as format 2 held them). */
    MeshSnapshotFile(long term, long index, double createdAt, Map<String, Long> originSeqs, StateImage image,
                     Map<String, DecidedIntents.Decided> intents) {
        this(term, index, createdAt, originSeqs, image, DecidedIntents.Memory.unplaced(intents));
    }

    /** The remembered decisions by id, in order. */
    Map<String, DecidedIntents.Decided> intents() {
        return Collections.unmodifiableMap(memory.decisions());
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
            out.writeInt(memory.remembered().size());
            for (DecidedIntents.Remembered r : memory.remembered()) {
                out.writeUTF(r.intentId());
                out.writeUTF(r.origin());
                out.writeLong(r.index());
                out.writeInt(r.position());
                out.writeBoolean(r.pinned());
                byte[] decided = MeshJson.bytes(decidedJson(r.decided()));
                out.writeInt(decided.length);
                out.write(decided);
            }
            writeMarks(out, memory.holds());
            writeMarks(out, memory.forgotten());
            writeGovernance(out, image.governance());
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
            if (format < 1 || format > FORMAT) {
                throw new CorruptSnapshotException("mesh snapshot format " + format + " is not 1 to " + FORMAT);
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
            DecidedIntents.Memory memory = DecidedIntents.Memory.EMPTY;
            if (format >= 2) {
                int count = in.readInt();
                if (count < 0 || count > 1_000_000) {
                    throw new CorruptSnapshotException("implausible intent count " + count);
                }
                List<DecidedIntents.Remembered> remembered = new ArrayList<>(Math.min(count, 65_536));
                for (int i = 0; i < count; i++) {
                    String id = in.readUTF();
                    String origin = DecidedIntents.UNKNOWN_ORIGIN;
                    long at = 0;
                    int position = 0;
                    boolean pinned = false;
                    if (format >= 3) {
                        origin = in.readUTF();
                        at = in.readLong();
                        position = in.readInt();
                        pinned = in.readBoolean();
                        if (at < 0 || position < 0) {
                            throw new CorruptSnapshotException("intent " + i + " has a negative index or position");
                        }
                    }
                    int size = in.readInt();
                    if (size < 0 || size > in.available()) {
                        throw new CorruptSnapshotException("intent " + i + " runs past the end of the file");
                    }
                    try {
                        remembered.add(new DecidedIntents.Remembered(id, origin, at, position, pinned,
                                decided(MeshJson.tree(in.readNBytes(size)))));
                    } catch (IllegalArgumentException e) {
                        throw new CorruptSnapshotException("unreadable decided intent " + i + ": " + e.getMessage(), e);
                    }
                }
                Map<String, Long> holds = format >= 3 ? readMarks(in, "hold") : Map.of();
                Map<String, Long> forgotten = format >= 3 ? readMarks(in, "forgotten mark") : Map.of();
                memory = new DecidedIntents.Memory(remembered, holds, forgotten);
            }
            NamespaceGovernance.Image governance = format >= 4 ? readGovernance(in) : NamespaceGovernance.Image.EMPTY;
            int length = in.readInt();
            if (length < 0 || length != in.available()) {
                throw new CorruptSnapshotException("the state body does not end where the file does");
            }
            StateSnapshot state = SnapshotCodec.decode(in.readNBytes(length));
            if (term < 0 || index < 0) {
                throw new CorruptSnapshotException("negative term or index");
            }
            return new MeshSnapshotFile(term, index, createdAt, origins, state.image().withGovernance(governance),
                    memory);
        } catch (IOException e) {
            throw new CorruptSnapshotException("unreadable mesh snapshot: " + e, e);
        }
    }

    private static void writeGovernance(DataOutputStream out, NamespaceGovernance.Image g) throws IOException {
        out.writeInt(g.partitions().size());
        for (Partition p : g.partitions()) {
            out.writeUTF(p.namespace());
            out.writeBoolean(p.ownerHubId() != null);
            if (p.ownerHubId() != null) {
                out.writeUTF(p.ownerHubId());
            }
            out.writeInt(p.contestingHubs().size());
            for (String hub : p.contestingHubs()) {
                out.writeUTF(hub);
            }
        }
        out.writeInt(g.quarantines().size());
        for (Map.Entry<String, String> q : g.quarantines().entrySet()) {
            out.writeUTF(q.getKey());
            out.writeUTF(q.getValue());
        }
    }

    private static NamespaceGovernance.Image readGovernance(DataInputStream in) throws IOException,
            CorruptSnapshotException {
        int n = in.readInt();
        if (n < 0 || n > 100_000) {
            throw new CorruptSnapshotException("implausible partition count " + n);
        }
        List<Partition> partitions = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            String ns = in.readUTF();
            String owner = in.readBoolean() ? in.readUTF() : null;
            int hubs = in.readInt();
            if (hubs < 0 || hubs > 10_000) {
                throw new CorruptSnapshotException("implausible contesting hub count " + hubs + " of namespace " + ns);
            }
            List<String> contesting = new ArrayList<>();
            for (int k = 0; k < hubs; k++) {
                contesting.add(in.readUTF());
            }
            partitions.add(new Partition(ns, owner, contesting));
        }
        int q = in.readInt();
        if (q < 0 || q > 100_000) {
            throw new CorruptSnapshotException("implausible quarantine count " + q);
        }
        Map<String, String> quarantines = new LinkedHashMap<>();
        for (int i = 0; i < q; i++) {
            quarantines.put(in.readUTF(), in.readUTF());
        }
        return new NamespaceGovernance.Image(partitions, quarantines);
    }

    private static void writeMarks(DataOutputStream out, Map<String, Long> marks) throws IOException {
        Map<String, Long> sorted = new TreeMap<>(marks); // the same state, the same bytes
        out.writeInt(sorted.size());
        for (Map.Entry<String, Long> e : sorted.entrySet()) {
            out.writeUTF(e.getKey());
            out.writeLong(e.getValue());
        }
    }

    private static Map<String, Long> readMarks(DataInputStream in, String what) throws IOException,
            CorruptSnapshotException {
        int n = in.readInt();
        if (n < 0 || n > 100_000) {
            throw new CorruptSnapshotException("implausible " + what + " count " + n);
        }
        Map<String, Long> out = new LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
            String origin = in.readUTF();
            long value = in.readLong();
            if (value < 0) {
                throw new CorruptSnapshotException("negative " + what + " of node " + origin);
            }
            out.put(origin, value);
        }
        return out;
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
