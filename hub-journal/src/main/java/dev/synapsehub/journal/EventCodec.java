package dev.synapsehub.journal;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.io.SerializedString;
import com.fasterxml.jackson.core.io.SegmentedStringWriter;
import com.fasterxml.jackson.core.util.BufferRecycler;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.claim.ClaimStatus;
import dev.synapsehub.core.claim.GitContext;
import dev.synapsehub.core.command.ChannelCommand;
import dev.synapsehub.core.event.AuditRecordEvent;
import dev.synapsehub.core.event.ChannelEvent;
import dev.synapsehub.core.event.IdentityPinEvent;
import dev.synapsehub.core.event.IdentityPinReclaimEvent;
import dev.synapsehub.core.event.ClaimDeniedEvent;
import dev.synapsehub.core.event.ClaimReleasedEvent;
import dev.synapsehub.core.event.ClaimSnapshotEvent;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.event.IdempotencyRecordedEvent;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
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
 *   <li>{@code channel} (ours, decision A10.1): {@code op} (create, invite, join, leave),
 *       {@code channel} (trimmed, 1–200 characters), {@code agent}, {@code invitee} (an
 *       invite's, required there, else absent) and {@code label} (a create's, or absent).</li>
 *   <li>{@code identity_pin} (ours, contract A2): {@code op} (pin, unpin), {@code name},
 *       {@code key_id}, {@code public_key} (standard base64 of 32 bytes).</li>
 *   <li>{@code identity_pin_reclaim} (contract A2.6, audit only): {@code operator},
 *       {@code operator_key_id}, {@code pin_name}, {@code expected_key_id}, {@code reason},
 *       {@code break_glass}, {@code owner_online}, {@code lease_live},
 *       {@code stale_owner_reclaimable}, {@code status} (approved, applied), {@code applied},
 *       and on an applied record {@code approved_seq} and {@code evicted_live_socket}.</li>
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

    private static final JsonFactory FACTORY = PayloadReader.FACTORY;
    private static final ObjectMapper MAPPER = new ObjectMapper(FACTORY);

    private static final Map<String, ClaimSnapshotEvent.Kind> SNAPSHOT_KINDS = Map.of(
            "claim", ClaimSnapshotEvent.Kind.CLAIM,
            "task_update", ClaimSnapshotEvent.Kind.TASK_UPDATE,
            "checkpoint", ClaimSnapshotEvent.Kind.CHECKPOINT,
            "handoff", ClaimSnapshotEvent.Kind.HANDOFF);

    private final MessagingEventCodec messaging = new MessagingEventCodec();

    /** True for the kinds whose payload is a claim record (claim, task_update, checkpoint, handoff). */
    static boolean isClaimSnapshotKind(String kind) {
        return kind != null && SNAPSHOT_KINDS.containsKey(kind);
    }

    /** True when this codec decodes {@code kind}; other kinds are skipped on replay. */
    public boolean knows(String kind) {
        return MessagingEventCodec.knows(kind) || SNAPSHOT_KINDS.containsKey(kind) || "release".equals(kind) || "claim_denial".equals(kind)
                || "idempotency".equals(kind) || AuditRecordEvent.KINDS.contains(kind) || "channel".equals(kind)
                || "identity_pin".equals(kind) || "identity_pin_reclaim".equals(kind)
                || MemoryEventCodec.KINDS.contains(kind);
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
        if (event instanceof dev.synapsehub.core.event.MemoryEvent memory) {
            return memory.payloadJson(); // recall / finding, written compact and ASCII-escaped by the edge
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
            } else if (event instanceof ChannelEvent c) {
                g.writeStringField("op", c.op().name().toLowerCase(java.util.Locale.ROOT));
                g.writeStringField("channel", c.channel());
                g.writeStringField("agent", c.agent());
                if (c.invitee() != null) {
                    g.writeStringField("invitee", c.invitee());
                }
                if (c.label() != null) {
                    g.writeStringField("label", c.label());
                }
            } else if (event instanceof IdentityPinEvent p) {
                g.writeStringField("op", p.op() == IdentityPinEvent.Op.PIN ? "pin" : "unpin");
                g.writeStringField("name", p.name());
                g.writeStringField("key_id", p.keyId());
                g.writeStringField("public_key", p.publicKey());
            } else if (event instanceof IdentityPinReclaimEvent a) {
                writeReclaim(g, a);
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
        if (c.pathIdentity() != null) {
            PathIdentityCodec.write(g, c.pathIdentity());
        }
    }

    private static void writeReclaim(JsonGenerator g, IdentityPinReclaimEvent a) throws IOException {
        g.writeStringField("operator", a.operator());
        g.writeStringField("operator_key_id", a.operatorKeyId());
        g.writeStringField("pin_name", a.pinName());
        g.writeStringField("expected_key_id", a.expectedKeyId());
        g.writeStringField("reason", a.reason());
        g.writeBooleanField("break_glass", a.breakGlass());
        g.writeBooleanField("owner_online", a.ownerOnline());
        g.writeBooleanField("lease_live", a.leaseLive());
        g.writeBooleanField("stale_owner_reclaimable", a.staleOwnerReclaimable());
        g.writeStringField("status", a.status());
        g.writeBooleanField("applied", a.applied());
        if (a.applied()) {
            g.writeNumberField("approved_seq", a.approvedSeq());
            g.writeBooleanField("evicted_live_socket", a.evictedLiveSocket());
        }
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
        if (!Double.isFinite(ts)) {
            throw new CorruptPayloadException("ts is not a finite number");
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
        if (MemoryEventCodec.KINDS.contains(kind)) {
            return Optional.of(MemoryEventCodec.decode(kind, ts, payload));
        }
        return Optional.of(decode(kind, ts, PayloadReader.parse(payload, "idempotency".equals(kind))));
    }

    /**
     * Decodes a stored row from the UTF-8 bytes of its payload, as SQLite holds them (replay's
     * fast path: no {@code String} of the whole payload). Decodes exactly as
     * {@link #decode(String, double, String)} of the same text: a payload that does not start
     * with '{', holds a byte that is not ASCII (Jackson's byte parser reads some ill-formed UTF-8,
     * an overlong '/', as characters where the text path has U+FFFD), or does not decode from
     * its bytes is decoded through the text path instead,
     * which gives the authoritative result and message. Claim-family payloads in the exact layout
     * {@link #encode} writes are read by {@link CanonicalClaimDecoder}, without a parser.
     */
    public Optional<CoordinationEvent> decode(String kind, double ts, byte[] utf8) throws CorruptPayloadException {
        // the claim family as this codec writes it, read without a parser (replay's bulk)
        if (kind != null && Double.isFinite(ts)) {
            ClaimSnapshotEvent.Kind snapshot = SNAPSHOT_KINDS.get(kind);
            if (snapshot != null) {
                Claim claim = CanonicalClaimDecoder.claim(utf8);
                if (claim != null) {
                    return Optional.of(new ClaimSnapshotEvent(ts, snapshot, claim));
                }
            } else if ("release".equals(kind)) {
                String taskId = CanonicalClaimDecoder.releasedTaskId(utf8);
                if (taskId != null) {
                    return Optional.of(new ClaimReleasedEvent(ts, taskId));
                }
            }
        }
        if (!knows(kind)) {
            return Optional.empty();
        }
        if (utf8 != null && utf8.length > 0 && utf8[0] == '{' && !MessagingEventCodec.knows(kind)
                && Double.isFinite(ts) && !AuditRecordEvent.KINDS.contains(kind)
                && !MemoryEventCodec.KINDS.contains(kind) && ascii(utf8)) {
            try {
                return Optional.of(decode(kind, ts, PayloadReader.parse(utf8, "idempotency".equals(kind))));
            } catch (CorruptPayloadException | RuntimeException e) {
                // fall through to the text path
            }
        }
        return decode(kind, ts, utf8 == null ? null : new String(utf8, StandardCharsets.UTF_8));
    }

    /** True when every byte is ASCII (this codec writes nothing else). */
    private static boolean ascii(byte[] utf8) {
        for (byte b : utf8) {
            if (b < 0) {
                return false;
            }
        }
        return true;
    }

    private static CoordinationEvent decode(String kind, double ts, PayloadReader r) throws CorruptPayloadException {
        ClaimSnapshotEvent.Kind snapshot = SNAPSHOT_KINDS.get(kind);
        if (snapshot != null) {
            return new ClaimSnapshotEvent(ts, snapshot, readClaim(r));
        } else if ("release".equals(kind)) {
            return new ClaimReleasedEvent(ts, r.id("task_id"));
        } else if ("claim_denial".equals(kind)) {
            return new ClaimDeniedEvent(ts, r.text("claimant", ""), r.text("claimant_sha256", ""),
                    r.bool("claimant_truncated", false), (int) r.integer("path_count", 0, 0),
                    r.text("reason_code", ""), r.text("scope_sha256", ""), r.text("task_id_sha256", ""));
        } else if ("channel".equals(kind)) {
            return readChannel(r, ts);
        } else if ("identity_pin".equals(kind)) {
            return readPin(r, ts);
        } else if ("identity_pin_reclaim".equals(kind)) {
            return readReclaim(r, ts);
        }
        return readIdempotency(r, ts);
    }

    /** A pin or unpin; strict: a payload the live hub could not have written is corrupt. */
    private static IdentityPinEvent readPin(PayloadReader r, double ts) throws CorruptPayloadException {
        String opText = r.text("op");
        IdentityPinEvent.Op op = switch (opText) {
            case "pin" -> IdentityPinEvent.Op.PIN;
            case "unpin" -> IdentityPinEvent.Op.UNPIN;
            default -> throw new CorruptPayloadException("unknown identity pin op '" + opText + "'");
        };
        String name = r.id("name");
        String keyId = r.id("key_id");
        String key = r.id("public_key");
        byte[] raw;
        try {
            raw = java.util.Base64.getDecoder().decode(key);
        } catch (IllegalArgumentException e) {
            throw new CorruptPayloadException("public_key is not base64", e);
        }
        if (raw.length != 32) {
            throw new CorruptPayloadException("public_key is " + raw.length + " bytes, not 32");
        }
        return new IdentityPinEvent(ts, op, name, keyId, key);
    }

    /** A reclaim audit record; an applied one carries its approval's seq and the eviction flag. */
    private static IdentityPinReclaimEvent readReclaim(PayloadReader r, double ts) throws CorruptPayloadException {
        String status = r.text("status");
        if (!"approved".equals(status) && !"applied".equals(status)) {
            throw new CorruptPayloadException("unknown reclaim status '" + status + "'");
        }
        boolean applied = r.bool("applied", false);
        if (applied != "applied".equals(status)) {
            throw new CorruptPayloadException("applied does not match status " + status);
        }
        Long approvedSeq = applied ? r.integer("approved_seq") : null;
        Boolean evicted = applied ? r.bool("evicted_live_socket", false) : null;
        return new IdentityPinReclaimEvent(ts, r.id("operator"), r.text("operator_key_id"), r.id("pin_name"),
                r.text("expected_key_id"), r.text("reason"), r.bool("break_glass", false),
                r.bool("owner_online", false), r.bool("lease_live", false), r.bool("stale_owner_reclaimable", false),
                status, applied, approvedSeq, evicted);
    }

    /** A channel change; strict: a payload the live hub could not have written is corrupt. */
    private static ChannelEvent readChannel(PayloadReader r, double ts) throws CorruptPayloadException {
        String opText = r.text("op");
        ChannelCommand.Op op;
        switch (opText) {
            case "create" -> op = ChannelCommand.Op.CREATE;
            case "invite" -> op = ChannelCommand.Op.INVITE;
            case "join" -> op = ChannelCommand.Op.JOIN;
            case "leave" -> op = ChannelCommand.Op.LEAVE;
            default -> throw new CorruptPayloadException("unknown channel op '" + opText + "'");
        }
        String id = r.id("channel");
        if (!id.equals(id.strip()) || id.length() > 200) {
            throw new CorruptPayloadException("channel id is not trimmed or longer than 200 characters");
        }
        String agent = r.id("agent");
        String invitee = r.nullableText("invitee");
        if (op == ChannelCommand.Op.INVITE && (invitee == null || invitee.isBlank())) {
            throw new CorruptPayloadException("an invite without an invitee");
        }
        if (op != ChannelCommand.Op.INVITE && invitee != null) {
            throw new CorruptPayloadException("an invitee on a channel " + opText);
        }
        String label = r.nullableText("label");
        if (op != ChannelCommand.Op.CREATE && label != null) {
            throw new CorruptPayloadException("a label on a channel " + opText);
        }
        return new ChannelEvent(ts, op, id, agent, invitee, label);
    }

    /**
     * The claim object. Required: {@code task_id}, {@code owner} (not blank), {@code epoch} (at
     * least 1, as every issued epoch) and {@code lease_expires_at}; the rest default when absent
     * (reference logs), never when null.
     */
    private static Claim readClaim(PayloadReader r) throws CorruptPayloadException {
        // read in the order writeClaim writes them (the reader scans from the last member found)
        String taskId = r.id("task_id");
        String owner = r.id("owner");
        String note = r.text("note", "");
        double claimedAt = r.number("claimed_at", 0.0);
        double leaseExpiresAt = r.number("lease_expires_at");
        String status = r.text("status", ClaimStatus.CLAIMED.wire());
        String dataRef = r.text("data_ref", "");
        String worktree = r.text("worktree", "");
        List<String> paths = r.strings("paths");
        long epoch = r.integer("epoch");
        if (epoch < 1) {
            throw new CorruptPayloadException("epoch is " + epoch + ", below 1");
        }
        long version = r.integer("version", 0, 0);
        String checkpoint = r.text("checkpoint", "");
        GitContext git = readGit(r.object("git"));
        return new Claim(taskId, owner, r.text("quota_principal", owner), note, claimedAt, leaseExpiresAt,
                ClaimStatus.fromWire(status).orElseThrow(() -> new CorruptPayloadException("unknown status " + status)),
                dataRef, worktree, paths, epoch, version, checkpoint, git, PathIdentityCodec.read(r));
    }

    private static GitContext readGit(PayloadReader git) throws CorruptPayloadException {
        if (git == null) {
            return null;
        }
        return new GitContext(git.nullableText("branch"), git.nullableText("base"), git.nullableText("auto_release_on"));
    }

    /** {@code key} and {@code response} required; a response object (reference layout) is compacted. */
    private static IdempotencyRecordedEvent readIdempotency(PayloadReader r, double ts) throws CorruptPayloadException {
        String key = r.text("key");
        if (key.isEmpty()) {
            throw new CorruptPayloadException("key is empty");
        }
        String response;
        if (r.isObject("response")) {
            try {
                response = MAPPER.writeValueAsString(MAPPER.readTree(r.raw("response")));
            } catch (IOException e) {
                throw new CorruptPayloadException("unreadable response object: " + e.getMessage(), e);
            }
        } else {
            response = r.text("response");
        }
        return new IdempotencyRecordedEvent(ts, key, r.text("request_digest", ""), response);
    }
}
