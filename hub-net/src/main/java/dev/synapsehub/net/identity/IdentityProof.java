package dev.synapsehub.net.identity;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.net.auth.ReplayCache;
import dev.synapsehub.net.auth.SigningTime;
import dev.synapsehub.net.wire.CanonicalJson;

import java.nio.charset.StandardCharsets;

/**
 * The Ed25519 registration proof of wire contract A2.1–A2.2: checks a first frame's
 * {@code signature} object in the contract's order and gives its result string ({@code ok},
 * {@code unknown_key}, {@code sender_mismatch}, {@code bad_signature}, {@code invalid_domain},
 * {@code sequence_mismatch}, {@code expired}, {@code replayed}). Uses the JDK's Ed25519.
 * Thread-safe.
 */
public final class IdentityProof {
    /** The version 2 signing domain, signed before a NUL byte and the canonical frame. */
    public static final String DOMAIN = "aef:legacy-event:v0.1";
    /** How old a proof may be, seconds (A2.2). */
    public static final double WINDOW_SECONDS = 10.0;
    /** How far in the future a proof may be signed, seconds (A2.2). */
    public static final double FUTURE_SKEW_SECONDS = 1.0;
    /**
     * Longest {@code key_id}, in characters (code points). Ours: a key id is pinned and kept
     * forever (A2.5), so an unbounded one let one first frame store megabytes; the reference
     * clients send {@code machine-} and 16 hex digits. A longer one is {@code unknown_key}, as any
     * key id that cannot be the expected one (A2.2).
     */
    public static final int MAX_KEY_ID_CHARACTERS = 256;
    /** Accepted (key id, sender, nonce) identities remembered inside the window (A2.2). */
    public static final int REPLAY_CAPACITY = 4096;

    /** The DER prefix of an X.509 SubjectPublicKeyInfo for a raw 32-byte Ed25519 key (RFC 8410). */

    private final ReplayCache replay = new ReplayCache(REPLAY_CAPACITY, WINDOW_SECONDS);

    /**
     * Verifies the proof of a first frame.
     *
     * @param received the frame exactly as received (every member, the connect token included)
     * @param sender the hub's trimmed sender name
     * @param expectedKeyId the pinned key id, or null when any key id may pin (first use)
     * @param publicKey the standard base64 key to verify with (pinned, or presented on first use)
     * @param at now: {@code signed_at} is compared with its wall reading, which the signing client
     *           also reads (hub time may lag a wall-clock step for hours)
     * @return {@code ok} or the contract's failure string
     */
    public String verify(ObjectNode received, String sender, String expectedKeyId, String publicKey, SigningTime at) {
        double now = at.wall();
        JsonNode signature = received.get("signature");
        if (signature == null || !signature.isObject()) {
            return "missing_signature";
        }
        JsonNode keyId = signature.get("key_id");
        if (keyId == null || !keyId.isTextual() || keyId.textValue().isEmpty()
                || keyId.textValue().codePointCount(0, keyId.textValue().length()) > MAX_KEY_ID_CHARACTERS
                || (expectedKeyId != null && !expectedKeyId.equals(keyId.textValue()))) {
            return "unknown_key";
        }
        byte[] rawKey = Ed25519.rawPublicKey(publicKey);
        if (rawKey == null) {
            return "unknown_key";
        }
        JsonNode frameSender = received.get("sender");
        if (frameSender == null || !frameSender.isTextual() || !frameSender.textValue().equals(sender)) {
            return "sender_mismatch"; // byte for byte: " P/dan " is not "P/dan"
        }
        JsonNode algorithm = signature.get("algorithm");
        JsonNode version = signature.get("version");
        if (algorithm == null || !algorithm.isTextual() || !"ed25519".equals(algorithm.textValue())
                || version == null || !version.isIntegralNumber() || !version.canConvertToInt()
                || (version.intValue() != 1 && version.intValue() != 2)) {
            return "bad_signature";
        }
        int v = version.intValue();
        JsonNode domain = signature.get("domain");
        if (v == 2 ? domain == null || !domain.isTextual() || !DOMAIN.equals(domain.textValue()) : domain != null) {
            return "invalid_domain";
        }
        JsonNode signedAt = signature.get("signed_at");
        JsonNode sequence = signature.get("sequence");
        if (signedAt == null || sequence == null || !signedAt.isNumber() || !Double.isFinite(signedAt.doubleValue())) {
            return "bad_signature";
        }
        if (!sequence.isIntegralNumber() || sequence.bigIntegerValue().signum() <= 0) {
            return "sequence_mismatch";
        }
        double signed = signedAt.doubleValue();
        if (signed < now - WINDOW_SECONDS || signed > now + FUTURE_SKEW_SECONDS) {
            return "expired";
        }
        JsonNode nonce = signature.get("nonce");
        JsonNode value = signature.get("value");
        if (nonce == null || !nonce.isTextual() || nonce.textValue().isEmpty()
                || value == null || !value.isTextual() || value.textValue().isEmpty()) {
            return "bad_signature";
        }
        if (!Ed25519.verifies(rawKey, signedBytes(received, v), Ed25519.signature(value.textValue()))) {
            return "bad_signature";
        }
        if (!replay.admit(keyId.textValue(), sender, nonce.textValue(), signed, at)) {
            return "replayed";
        }
        return "ok";
    }

    /**
     * The bytes a proof signs: the frame as received minus {@code signature.value}, canonical
     * (§9 rules, non-ASCII literal); version 2 prefixes the domain and a NUL byte.
     */
    public static byte[] signedBytes(ObjectNode received, int version) {
        ObjectNode copy = received.deepCopy();
        if (copy.get("signature") instanceof ObjectNode sig) {
            sig.remove("value");
        }
        byte[] body = CanonicalJson.write(copy, false).getBytes(StandardCharsets.UTF_8);
        if (version != 2) {
            return body;
        }
        byte[] prefix = DOMAIN.getBytes(StandardCharsets.US_ASCII);
        byte[] out = new byte[prefix.length + 1 + body.length];
        System.arraycopy(prefix, 0, out, 0, prefix.length);
        System.arraycopy(body, 0, out, prefix.length + 1, body.length);
        return out;
    }
}
