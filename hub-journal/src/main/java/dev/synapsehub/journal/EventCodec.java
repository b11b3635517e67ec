package dev.synapsehub.journal;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.io.SerializedString;
import com.fasterxml.jackson.core.io.SegmentedStringWriter;
import com.fasterxml.jackson.core.util.BufferRecycler;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.claim.ClaimStatus;
import dev.synapsehub.core.claim.GitContext;
import dev.synapsehub.core.event.AuditRecordEvent;
import dev.synapsehub.core.event.ClaimDeniedEvent;
import dev.synapsehub.core.event.ClaimReleasedEvent;
import dev.synapsehub.core.event.ClaimSnapshotEvent;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.event.IdempotencyRecordedEvent;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Encodes {@link CoordinationEvent}s to the stored payload shapes of the wire contract §12.4
 * and back. Payloads are compact JSON with every non-ASCII character escaped, so any Java
 * string (including lone surrogates) survives the round trip.
 *
 * <ul>
 *   <li>{@code claim} / {@code task_update} / {@code checkpoint} / {@code handoff}: the claim
 *       object {@code task_id, owner, note, claimed_at, lease_expires_at, status, data_ref,
 *       worktree, paths, epoch, version, checkpoint, git (object or null: branch, base,
 *       auto_release_on), quota_principal}. A payload without {@code quota_principal} (older
 *       logs) is charged to {@code owner}; unknown members such as {@code path_identity} are
 *       ignored.</li>
 *   <li>{@code release}: {@code {task_id}}.</li>
 *   <li>{@code claim_denial}: {@code claimant, claimant_sha256, claimant_truncated,
 *       decision:"deny", path_count, reason_code, scope_sha256, task_id_sha256}.</li>
 *   <li>{@code idempotency}: {@code key, request_digest, response}; the response is stored as a
 *       JSON string so it replays byte for byte. A response stored as a JSON object (the
 *       reference hub's layout) is accepted and re-serialised compactly.</li>
 * </ul>
 *
 * The event timestamp is not in the payload: it is the row's {@code ts} column. Thread-safe.
 */
public final class EventCodec {

    /** A payload that cannot be decoded into its kind's event. */
    public static final class CorruptPayloadException extends Exception {
        public CorruptPayloadException(String message) {
            super(message);
        }

        public CorruptPayloadException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private static final JsonFactory FACTORY = JsonFactory.builder()
            .enable(JsonWriteFeature.ESCAPE_NON_ASCII)
            // exact (correctly rounded) like Double.parseDouble, only faster
            .enable(StreamReadFeature.USE_FAST_DOUBLE_PARSER)
            .build();
    private static final ObjectMapper MAPPER = new ObjectMapper(FACTORY);

    private static final Map<String, ClaimSnapshotEvent.Kind> SNAPSHOT_KINDS = Map.of(
            "claim", ClaimSnapshotEvent.Kind.CLAIM,
            "task_update", ClaimSnapshotEvent.Kind.TASK_UPDATE,
            "checkpoint", ClaimSnapshotEvent.Kind.CHECKPOINT,
            "handoff", ClaimSnapshotEvent.Kind.HANDOFF);

    private final MessagingEventCodec messaging = new MessagingEventCodec();

    /** True when this codec decodes {@code kind}; other kinds are skipped on replay. */
    public boolean knows(String kind) {
        return MessagingEventCodec.knows(kind) || SNAPSHOT_KINDS.containsKey(kind) || "release".equals(kind) || "claim_denial".equals(kind)
                || "idempotency".equals(kind) || AuditRecordEvent.KINDS.contains(kind);
    }

    // -------------------------------------------------------------------------------------
    // Encode

    /** The stored payload of {@code event}: compact, ASCII-escaped JSON. */
    public String encode(CoordinationEvent event) {
        if (MessagingEventCodec.handles(event)) {
            return messaging.encode(event); // board, resource, chat, mailbox and receipt kinds
        }
        if (event instanceof AuditRecordEvent audit) {
            return audit.payloadJson(); // authored as compact, ASCII-escaped JSON by its module
        }
        // Jackson's pooled segment writer: no synchronized StringBuffer, no copy per grow
        BufferRecycler recycler = FACTORY._getBufferRecycler();
        SegmentedStringWriter out = new SegmentedStringWriter(recycler);
        try (JsonGenerator g = FACTORY.createGenerator(out)) {
            g.writeStartObject();
            if (event instanceof ClaimSnapshotEvent s) {
                writeClaim(g, s.claim());
            } else if (event instanceof ClaimReleasedEvent r) {
                g.writeStringField("task_id", r.taskId());
            } else if (event instanceof ClaimDeniedEvent d) {
                g.writeStringField("claimant", d.claimant());
                g.writeStringField("claimant_sha256", d.claimantSha256());
                g.writeBooleanField("claimant_truncated", d.claimantTruncated());
                g.writeStringField("decision", "deny");
                g.writeNumberField("path_count", d.pathCount());
                g.writeStringField("reason_code", d.reasonCode());
                g.writeStringField("scope_sha256", d.scopeSha256());
                g.writeStringField("task_id_sha256", d.taskIdSha256());
            } else if (event instanceof IdempotencyRecordedEvent i) {
                g.writeStringField("key", i.key());
                g.writeStringField("request_digest", i.requestDigest());
                g.writeStringField("response", i.response());
            } else {
                throw new IllegalArgumentException("no payload shape for " + event.getClass().getName());
            }
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException("encoding " + event.kind(), e);
        }
        return drain(out, recycler);
    }

    private static String drain(SegmentedStringWriter out, BufferRecycler recycler) {
        try {
            return out.getAndClear();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            recycler.releaseToPool();
        }
    }

    // claim field names, quoted once (identical output to writeStringField("..."))
    private static final SerializedString F_TASK_ID = new SerializedString("task_id");
    private static final SerializedString F_OWNER = new SerializedString("owner");
    private static final SerializedString F_NOTE = new SerializedString("note");
    private static final SerializedString F_STATUS = new SerializedString("status");
    private static final SerializedString F_DATA_REF = new SerializedString("data_ref");
    private static final SerializedString F_WORKTREE = new SerializedString("worktree");
    private static final SerializedString F_CHECKPOINT = new SerializedString("checkpoint");
    private static final SerializedString F_BRANCH = new SerializedString("branch");
    private static final SerializedString F_BASE = new SerializedString("base");
    private static final SerializedString F_AUTO_RELEASE_ON = new SerializedString("auto_release_on");
    private static final SerializedString F_QUOTA_PRINCIPAL = new SerializedString("quota_principal");
    private static final SerializedString F_CLAIMED_AT = new SerializedString("claimed_at");
    private static final SerializedString F_LEASE_EXPIRES_AT = new SerializedString("lease_expires_at");
    private static final SerializedString F_EPOCH = new SerializedString("epoch");
    private static final SerializedString F_VERSION = new SerializedString("version");
    private static final SerializedString F_PATHS = new SerializedString("paths");
    private static final SerializedString F_GIT = new SerializedString("git");

    private static void writeClaim(JsonGenerator g, Claim c) throws IOException {
        writeString(g, F_TASK_ID, c.taskId());
        writeString(g, F_OWNER, c.owner());
        writeString(g, F_NOTE, c.note());
        g.writeFieldName(F_CLAIMED_AT);
        g.writeNumber(c.claimedAt());
        g.writeFieldName(F_LEASE_EXPIRES_AT);
        g.writeNumber(c.leaseExpiresAt());
        writeString(g, F_STATUS, c.status().wire());
        writeString(g, F_DATA_REF, c.dataRef());
        writeString(g, F_WORKTREE, c.worktree());
        g.writeFieldName(F_PATHS);
        g.writeStartArray();
        for (String path : c.paths()) {
            g.writeString(path);
        }
        g.writeEndArray();
        g.writeFieldName(F_EPOCH);
        g.writeNumber(c.epoch());
        g.writeFieldName(F_VERSION);
        g.writeNumber(c.version());
        writeString(g, F_CHECKPOINT, c.checkpoint());
        GitContext git = c.git();
        if (git == null) {
            g.writeFieldName(F_GIT);
            g.writeNull();
        } else {
            g.writeFieldName(F_GIT);
            g.writeStartObject();
            writeString(g, F_BRANCH, git.branch());
            writeString(g, F_BASE, git.base());
            writeString(g, F_AUTO_RELEASE_ON, git.autoReleaseOn());
            g.writeEndObject();
        }
        writeString(g, F_QUOTA_PRINCIPAL, c.principal());
    }

    private static void writeString(JsonGenerator g, SerializedString name, String value) throws IOException {
        g.writeFieldName(name);
        g.writeString(value);
    }

    // -------------------------------------------------------------------------------------
    // Decode

    /**
     * Decodes a stored row.
     *
     * @return empty for a kind this codec does not know (skipped on replay, forward compatible)
     * @throws CorruptPayloadException when the payload is not valid for its kind
     */
    public Optional<CoordinationEvent> decode(String kind, double ts, String payload) throws CorruptPayloadException {
        if (!knows(kind)) {
            return Optional.empty();
        }
        if (payload == null) {
            throw new CorruptPayloadException("null payload");
        }
        if (AuditRecordEvent.KINDS.contains(kind)) {
            try {
                if (!MAPPER.readTree(payload).isObject()) {
                    throw new IllegalArgumentException("not a JSON object");
                }
                return Optional.of(new AuditRecordEvent(ts, kind, payload.strip()));
            } catch (IOException | IllegalArgumentException e) {
                throw new CorruptPayloadException("undecodable " + kind + " payload: " + e.getMessage(), e);
            }
        }
        if (MessagingEventCodec.knows(kind)) {
            return Optional.of(messaging.decode(kind, ts, payload));
        }
        try (JsonParser p = FACTORY.createParser(payload)) {
            return Optional.of(decode(kind, ts, p));
        } catch (IOException | RuntimeException e) {
            throw new CorruptPayloadException("undecodable " + kind + " payload: " + e.getMessage(), e);
        }
    }

    /**
     * Decodes a stored row from the UTF-8 bytes of its payload, as SQLite holds them (replay's
     * fast path: no {@code String} of the whole payload). Decodes exactly as
     * {@link #decode(String, double, String)} of the same text: a payload that does not start
     * with '{' or does not parse as UTF-8 JSON is decoded through the text path instead.
     */
    public Optional<CoordinationEvent> decode(String kind, double ts, byte[] utf8) throws CorruptPayloadException {
        if (!knows(kind)) {
            return Optional.empty();
        }
        if (utf8 != null && utf8.length > 0 && utf8[0] == '{' && !MessagingEventCodec.knows(kind)
                && !AuditRecordEvent.KINDS.contains(kind)) {
            try (JsonParser p = FACTORY.createParser(utf8)) {
                return Optional.of(decode(kind, ts, p));
            } catch (IOException | RuntimeException | CorruptPayloadException e) {
                // fall through: the text path gives the authoritative result and message
            }
        }
        return decode(kind, ts, utf8 == null ? null : new String(utf8, StandardCharsets.UTF_8));
    }

    private CoordinationEvent decode(String kind, double ts, JsonParser p) throws IOException, CorruptPayloadException {
        if (p.nextToken() != JsonToken.START_OBJECT) {
            throw new CorruptPayloadException("payload is not a JSON object");
        }
        CoordinationEvent event;
        ClaimSnapshotEvent.Kind snapshot = SNAPSHOT_KINDS.get(kind);
        if (snapshot != null) {
            event = new ClaimSnapshotEvent(ts, snapshot, readClaim(p));
        } else if ("release".equals(kind)) {
            event = readRelease(p, ts);
        } else if ("claim_denial".equals(kind)) {
            event = readDenial(p, ts);
        } else {
            event = readIdempotency(p, ts);
        }
        if (p.nextToken() != null) {
            throw new CorruptPayloadException("trailing content after the payload object");
        }
        return event;
    }

    private static Claim readClaim(JsonParser p) throws IOException, CorruptPayloadException {
        String taskId = null;
        String owner = null;
        String principal = null;
        String note = "";
        Double claimedAt = null;
        Double leaseExpiresAt = null;
        ClaimStatus status = ClaimStatus.CLAIMED;
        String dataRef = "";
        String worktree = "";
        List<String> paths = List.of();
        Long epoch = null;
        long version = 0;
        String checkpoint = "";
        GitContext git = null;
        for (JsonToken t = p.nextToken(); t == JsonToken.FIELD_NAME; t = p.nextToken()) {
            String name = p.currentName();
            JsonToken value = p.nextToken();
            switch (name) {
                case "task_id" -> taskId = text(p, value, name);
                case "owner" -> owner = text(p, value, name);
                case "quota_principal" -> principal = text(p, value, name);
                case "note" -> note = text(p, value, name);
                case "claimed_at" -> claimedAt = number(p, value, name);
                case "lease_expires_at" -> leaseExpiresAt = number(p, value, name);
                case "status" -> {
                    String wire = text(p, value, name);
                    status = ClaimStatus.fromWire(wire)
                            .orElseThrow(() -> new CorruptPayloadException("unknown status " + wire));
                }
                case "data_ref" -> dataRef = text(p, value, name);
                case "worktree" -> worktree = text(p, value, name);
                case "paths" -> paths = readStrings(p, value, name);
                case "epoch" -> epoch = integer(p, value, name);
                case "version" -> version = integer(p, value, name);
                case "checkpoint" -> checkpoint = text(p, value, name);
                case "git" -> git = readGit(p, value);
                default -> p.skipChildren();
            }
        }
        if (taskId == null || owner == null || epoch == null || leaseExpiresAt == null) {
            throw new CorruptPayloadException("claim payload lacks task_id, owner, epoch or lease_expires_at");
        }
        return new Claim(taskId, owner, principal == null ? owner : principal, note,
                claimedAt == null ? 0.0 : claimedAt, leaseExpiresAt, status, dataRef, worktree, paths, epoch,
                version, checkpoint, git);
    }

    private static GitContext readGit(JsonParser p, JsonToken value) throws IOException, CorruptPayloadException {
        if (value == JsonToken.VALUE_NULL) {
            return null;
        }
        if (value != JsonToken.START_OBJECT) {
            throw new CorruptPayloadException("git must be an object or null");
        }
        String branch = null;
        String base = null;
        String autoRelease = null;
        for (JsonToken t = p.nextToken(); t == JsonToken.FIELD_NAME; t = p.nextToken()) {
            String name = p.currentName();
            JsonToken v = p.nextToken();
            switch (name) {
                case "branch" -> branch = text(p, v, name);
                case "base" -> base = text(p, v, name);
                case "auto_release_on" -> autoRelease = text(p, v, name);
                default -> p.skipChildren();
            }
        }
        return new GitContext(branch, base, autoRelease);
    }

    private static ClaimReleasedEvent readRelease(JsonParser p, double ts) throws IOException, CorruptPayloadException {
        String taskId = null;
        for (JsonToken t = p.nextToken(); t == JsonToken.FIELD_NAME; t = p.nextToken()) {
            String name = p.currentName();
            JsonToken value = p.nextToken();
            if ("task_id".equals(name)) {
                taskId = text(p, value, name);
            } else {
                p.skipChildren();
            }
        }
        if (taskId == null) {
            throw new CorruptPayloadException("release payload lacks task_id");
        }
        return new ClaimReleasedEvent(ts, taskId);
    }

    private static ClaimDeniedEvent readDenial(JsonParser p, double ts) throws IOException, CorruptPayloadException {
        String claimant = "";
        String claimantSha = "";
        boolean truncated = false;
        int pathCount = 0;
        String reason = "";
        String scopeSha = "";
        String taskSha = "";
        for (JsonToken t = p.nextToken(); t == JsonToken.FIELD_NAME; t = p.nextToken()) {
            String name = p.currentName();
            JsonToken value = p.nextToken();
            switch (name) {
                case "claimant" -> claimant = text(p, value, name);
                case "claimant_sha256" -> claimantSha = text(p, value, name);
                case "claimant_truncated" -> truncated = value == JsonToken.VALUE_TRUE;
                case "path_count" -> pathCount = (int) integer(p, value, name);
                case "reason_code" -> reason = text(p, value, name);
                case "scope_sha256" -> scopeSha = text(p, value, name);
                case "task_id_sha256" -> taskSha = text(p, value, name);
                default -> p.skipChildren();
            }
        }
        return new ClaimDeniedEvent(ts, claimant, claimantSha, truncated, pathCount, reason, scopeSha, taskSha);
    }

    private static IdempotencyRecordedEvent readIdempotency(JsonParser p, double ts)
            throws IOException, CorruptPayloadException {
        String key = null;
        String digest = "";
        String response = null;
        for (JsonToken t = p.nextToken(); t == JsonToken.FIELD_NAME; t = p.nextToken()) {
            String name = p.currentName();
            JsonToken value = p.nextToken();
            switch (name) {
                case "key" -> key = text(p, value, name);
                case "request_digest" -> digest = text(p, value, name);
                case "response" -> {
                    if (value == JsonToken.VALUE_STRING) {
                        response = p.getText();
                    } else if (value == JsonToken.START_OBJECT) {
                        JsonNode tree = MAPPER.readTree(p);
                        response = MAPPER.writeValueAsString(tree);
                    } else {
                        throw new CorruptPayloadException("response must be a string or an object");
                    }
                }
                default -> p.skipChildren();
            }
        }
        if (key == null || response == null) {
            throw new CorruptPayloadException("idempotency payload lacks key or response");
        }
        return new IdempotencyRecordedEvent(ts, key, digest, response);
    }

    private static String text(JsonParser p, JsonToken value, String name) throws IOException, CorruptPayloadException {
        if (value == JsonToken.VALUE_STRING) {
            return p.getText();
        }
        if (value == JsonToken.VALUE_NULL) {
            return null;
        }
        throw new CorruptPayloadException(name + " must be a string");
    }

    private static double number(JsonParser p, JsonToken value, String name) throws IOException, CorruptPayloadException {
        if (value == JsonToken.VALUE_NUMBER_FLOAT || value == JsonToken.VALUE_NUMBER_INT) {
            return p.getDoubleValue();
        }
        throw new CorruptPayloadException(name + " must be a number");
    }

    private static long integer(JsonParser p, JsonToken value, String name) throws IOException, CorruptPayloadException {
        if (value == JsonToken.VALUE_NUMBER_INT) {
            return p.getLongValue();
        }
        if (value == JsonToken.VALUE_NUMBER_FLOAT) {
            double d = p.getDoubleValue();
            if (d == Math.rint(d) && Math.abs(d) < 9.0e15) {
                return (long) d;
            }
        }
        throw new CorruptPayloadException(name + " must be an integer");
    }

    private static List<String> readStrings(JsonParser p, JsonToken value, String name)
            throws IOException, CorruptPayloadException {
        if (value == JsonToken.VALUE_NULL) {
            return List.of();
        }
        if (value != JsonToken.START_ARRAY) {
            throw new CorruptPayloadException(name + " must be an array");
        }
        List<String> out = new ArrayList<>();
        for (JsonToken t = p.nextToken(); t != JsonToken.END_ARRAY; t = p.nextToken()) {
            if (t != JsonToken.VALUE_STRING) {
                throw new CorruptPayloadException(name + " must hold strings");
            }
            out.add(p.getText());
        }
        return out;
    }
}
