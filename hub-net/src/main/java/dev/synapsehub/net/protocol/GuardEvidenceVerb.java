package dev.synapsehub.net.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.command.AuditRecordCommand;
import dev.synapsehub.core.reply.AuditRecordedReply;
import dev.synapsehub.net.wire.CanonicalJson;
import dev.synapsehub.net.wire.HubFrames;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * {@code guard_denial} (wire contract A3): digest-only evidence that a client-side guard denied
 * an edit. Only a hub with a connect token and a journal takes it; the request passes the
 * per-principal ingress limit, then its six members are validated in the contract's order with
 * its exact texts, and the record is journaled at FULL as an audit-only {@code guard_denial}
 * event (it never changes state, live or on replay). The requester alone gets
 * {@code guard_denial_recorded} with the event's journal seq; {@code idem_key} applies it once.
 */
final class GuardEvidenceVerb {
    static final String TYPE = "guard_denial";
    private static final JsonNodeFactory NF = JsonNodeFactory.instance;
    private static final Set<String> REASON_CODES = Set.of("GUARD_NO_CLAIM", "GUARD_NOT_EDITABLE",
            "GUARD_OWNERSHIP_AMBIGUOUS", "GUARD_STATE_UNREACHABLE", "GUARD_TARGET_INVALID");
    private static final Set<String> PROVIDERS = Set.of("claude", "codex", "gemini", "grok", "kimi", "opencode",
            "shell");
    /** The most paths one denial may report (A3). */
    static final int MAX_PATH_COUNT = 512;
    private static final Pattern SHA256 = Pattern.compile("[0-9a-f]{64}");
    private static final String[] DIGESTS = {"actor_sha256", "call_sha256", "scope_sha256"};

    private final VerbSupport support;
    private final Outbox outbox;
    private final HubFrames frames;
    private final boolean journaled;
    private final String token;
    private final GuardEvidenceIngress ingress = new GuardEvidenceIngress();

    /**
     * The verb on a hub with a journal when {@code journaled}, and with the connect token
     * {@code token} (null on an open hub, which refuses the evidence).
     */
    GuardEvidenceVerb(VerbSupport support, Outbox outbox, HubFrames frames, boolean journaled, String token) {
        this.support = support;
        this.outbox = outbox;
        this.frames = frames;
        this.journaled = journaled;
        this.token = token;
    }

    /** Handles one request (on the connection's event loop). */
    void handle(Request r) {
        double now = support.now();
        if (token == null || !journaled) {
            refuse(r, "guard denial evidence requires an authenticated durable hub", "guard_evidence_unavailable", now);
            return;
        }
        // every bound socket of a token hub presented the token, so its principal is the token's:
        // the contract's "non-token principal" refusal cannot arise here
        java.util.Optional<dev.synapsehub.core.actor.Outcome> prior = support.priorAnswer(r);
        if (prior.isPresent()) { // a remembered key is answered before the present moment's limit, and uses none of it
            support.answerLater(r, prior.get());
            return;
        }
        int bytes = frames.write(r.frame()).getBytes(StandardCharsets.UTF_8).length;
        String limited = ingress.admit(r.session().principal(), bytes, now);
        if (limited != null) {
            ObjectNode e = frames.error(r.sender(), "guard denial evidence ingress limit exceeded", now);
            e.put("error_code", "guard_evidence_rate_limited");
            e.put("limit_reason", limited);
            outbox.send(r.session(), e);
            return;
        }
        String invalid = invalid(r);
        if (invalid != null) {
            refuse(r, invalid, "guard_evidence", now);
            return;
        }
        ObjectNode record = NF.objectNode();
        record.put("reason_code", r.get("reason_code").textValue());
        record.put("provider", r.get("provider").textValue());
        record.put("path_count", r.get("path_count").intValue());
        for (String d : DIGESTS) {
            record.put(d, r.get(d).textValue());
        }
        record.put("decision", "deny");
        record.put("credential_principal_sha256", credentialPrincipalSha256(token));
        record.put("recorder_sha256", sha256(r.sender()));
        String callSha = r.get("call_sha256").textValue();
        String reasonCode = r.get("reason_code").textValue();
        VerbSupport.GrantRenderer render = VerbSupport.GrantRenderer.typed(AuditRecordedReply.class,
                (recorded, decidedAt) -> {
                    ObjectNode f = frames.envelope(r.sender(), "guard_denial_recorded",
                            "Guard denial evidence recorded.", decidedAt);
                    f.put("audit_seq", recorded.seq());
                    f.put("call_sha256", callSha);
                    f.put("reason_code", reasonCode);
                    return f;
                });
        AuditRecordCommand command = new AuditRecordCommand(r.sender(), TYPE, CanonicalJson.write(record, true));
        support.submit(r, command, true, render, d -> outbox.send(d.request().session(),
                d.storedResponse() != null ? d.storedResponse()
                        : frames.write(render.render(d.reply(), d.at()))));
    }

    /** The first member that breaks A3's rules, as the contract's text; null when all hold. */
    static String invalid(Request r) {
        JsonNode reason = r.get("reason_code");
        if (reason == null || !reason.isTextual() || !REASON_CODES.contains(reason.textValue())) {
            return "guard denial reason_code is not recognised";
        }
        JsonNode provider = r.get("provider");
        if (provider == null || !provider.isTextual() || !PROVIDERS.contains(provider.textValue())) {
            return "guard denial provider is not recognised";
        }
        JsonNode count = r.get("path_count");
        if (count == null || !count.isIntegralNumber()) { // a JSON bool is no number here, 1.0 no integer
            return "guard denial path_count must be an integer";
        }
        if (!count.canConvertToInt() || count.intValue() < 0 || count.intValue() > MAX_PATH_COUNT) {
            return "guard denial path_count is outside the supported bound";
        }
        for (String d : DIGESTS) {
            JsonNode v = r.get(d);
            if (v == null || !v.isTextual() || !SHA256.matcher(v.textValue()).matches()) {
                return "guard denial " + d + " must be lowercase SHA-256";
            }
        }
        return null;
    }

    /**
     * The credential principal the record names (A3): SHA-256 hex of {@code auth-token:} and the
     * SHA-256 hex of {@code synapse-channel:claim-quota-principal:v1}, a NUL byte and the token.
     */
    static String credentialPrincipalSha256(String token) {
        return sha256("auth-token:" + sha256("synapse-channel:claim-quota-principal:v1\0" + token));
    }

    static String sha256(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                    .digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }

    private void refuse(Request r, String payload, String code, double now) {
        ObjectNode e = frames.error(r.sender(), payload, now);
        e.put("error_code", code);
        outbox.send(r.session(), e);
    }
}
