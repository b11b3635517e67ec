package dev.synapsehub.net.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.net.auth.MessageAuthenticator;
import dev.synapsehub.net.auth.ReplayCache;
import dev.synapsehub.net.auth.SigningTime;
import dev.synapsehub.net.identity.Ed25519;
import dev.synapsehub.net.wire.CanonicalJson;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;

/**
 * Verifies the Ed25519 signature of a signed capability card ({@code advertise} with a
 * {@code signature} object, contract §5.15, §6.6), with the signature rules the contract gives
 * for signed frames (A2.2, F8): members {@code version} (1), {@code key_id},
 * {@code algorithm} ({@code ed25519}), {@code public_key} (standard base64 of the raw 32-byte
 * key), {@code nonce}, {@code sequence} (integer ≥ 1), {@code signed_at} (Unix seconds, within
 * −10 s / +1 s of hub time), optional {@code expires_at}, and {@code value} (standard base64 of
 * the 64-byte signature). The signed bytes are the frame as the hub reads it (trimmed
 * {@code sender}, lower-case {@code type}, no {@code token}) with only {@code signature.value}
 * removed, as canonical JSON (§9) in UTF-8. The first failing check names the result.
 */
public final class CardSignature {
    /** Signed-at window into the past, seconds (A2.2). */
    public static final double WINDOW = 10.0;
    /** Signed-at tolerance into the future, seconds (A2.2). */
    public static final double FUTURE_SKEW = 1.0;
    /** DER prefix of an X.509 SubjectPublicKeyInfo holding a raw Ed25519 key (RFC 8410). */

    /** A verification outcome; {@code valid()} when the card may be registered. */
    public record Verification(String result, String detail, String keyId, long sequence, String cardDigest,
                               double signedAt, Double expiresAt) {
        /** True for {@code valid}. */
        public boolean valid() {
            return "valid".equals(result);
        }

        static Verification failed(String result, String detail) {
            return new Verification(result, detail, null, 0, null, 0, null);
        }
    }

    /**
     * Nonces remembered at most for one agent's cards at once: a card is self-certifying (any key
     * signs it), so without a share one client advertising many signed cards would fill the cache
     * and every other agent's next signed card would be refused {@code replayed} for the window.
     */
    static final int NONCES_PER_AGENT = 32;
    /** Every agent's share: 4,096 agents advertising a full share within the 10 s window. */
    static final int CAPACITY = 4096 * NONCES_PER_AGENT;
    private final ReplayCache replay = new ReplayCache(CAPACITY, WINDOW);

    /**
     * Verifies the {@code signature} object of {@code frame} (an object: the caller handles
     * absent and non-object ones) for the card of {@code agent}: {@code signed_at} against the wall
     * clock the signer reads too, {@code expires_at} against hub time {@code now}. A valid nonce
     * is remembered, so the same signed frame is {@code replayed} the second time.
     */
    public Verification verify(ObjectNode frame, String agent, SigningTime at, double now) {
        JsonNode sig = frame.get("signature");
        if (!"ed25519".equals(text(sig.get("algorithm")))) {
            return Verification.failed("bad_signature", "algorithm must be ed25519");
        }
        JsonNode version = sig.get("version");
        if (version == null || !version.isIntegralNumber() || version.asLong() != 1) {
            return Verification.failed("bad_signature", "version must be the integer 1");
        }
        String keyId = text(sig.get("key_id"));
        if (keyId == null || keyId.isEmpty()) {
            return Verification.failed("unknown_key", "key_id is missing");
        }
        byte[] key = Ed25519.rawPublicKey(text(sig.get("public_key")));
        if (key == null) {
            return Verification.failed("unknown_key", "public_key is not the base64 of a 32-byte Ed25519 key");
        }
        JsonNode signedAt = sig.get("signed_at");
        JsonNode sequence = sig.get("sequence");
        if (signedAt == null || !signedAt.isNumber() || sequence == null) {
            return Verification.failed("bad_signature", "signed_at and sequence are required");
        }
        if (!sequence.isIntegralNumber() || !sequence.canConvertToLong() || sequence.asLong() < 1) {
            return Verification.failed("sequence_mismatch", "sequence must be an integer of at least 1");
        }
        double signedAtSeconds = signedAt.asDouble();
        double wall = at.wall();
        if (!Double.isFinite(signedAtSeconds) || signedAtSeconds < wall - WINDOW || signedAtSeconds > wall + FUTURE_SKEW) {
            return Verification.failed("expired", "signed_at is outside the window of " + (long) WINDOW + " s");
        }
        JsonNode expires = sig.get("expires_at");
        Double expiresAt = null;
        if (expires != null && !expires.isNull()) {
            if (!expires.isNumber() || !Double.isFinite(expires.asDouble())) {
                return Verification.failed("bad_signature", "expires_at must be a number");
            }
            expiresAt = expires.asDouble();
            if (expiresAt <= now) {
                return Verification.failed("expired", "the card expired");
            }
        }
        String nonce = text(sig.get("nonce"));
        byte[] value = Ed25519.signature(text(sig.get("value")));
        if (nonce == null || nonce.isEmpty() || value == null) {
            return Verification.failed("bad_signature", "nonce and a 64-byte value are required");
        }
        if (nonce.length() > MessageAuthenticator.MAX_NONCE_LENGTH) { // each is remembered for the window
            return Verification.failed("bad_signature", "nonce is longer than "
                    + MessageAuthenticator.MAX_NONCE_LENGTH + " characters");
        }
        byte[] signed = signedBytes(frame);
        if (!Ed25519.verifies(key, signed, value)) {
            return Verification.failed("bad_signature", "the Ed25519 signature does not match the card");
        }
        switch (replay.admit(keyId, agent, nonce, signedAtSeconds, at,
                List.of(new ReplayCache.Share("agent\0" + agent, NONCES_PER_AGENT)))) {
            case REPLAYED -> {
                return Verification.failed("replayed", "this nonce was already used");
            }
            case FULL -> { // fail closed (never forget a live nonce), for this agent's cards only
                return Verification.failed("replayed", "too many signed cards from " + agent + " within "
                        + (long) WINDOW + " s (" + NONCES_PER_AGENT + "); send it again later");
            }
            case ADMITTED -> { }
        }
        return new Verification("valid", "ed25519 signature verified", keyId, sequence.asLong(), sha256(signed), signedAtSeconds,
                expiresAt);
    }

    /** The signed bytes of {@code frame}: without {@code token} and {@code signature.value}, canonical, UTF-8. */
    public static byte[] signedBytes(ObjectNode frame) {
        ObjectNode copy = frame.deepCopy();
        copy.remove("token");
        JsonNode sig = copy.get("signature");
        if (sig instanceof ObjectNode s) {
            s.remove("value");
        }
        return CanonicalJson.write(copy, false).getBytes(StandardCharsets.UTF_8);
    }

    private static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("SHA-256 is always available", e);
        }
    }

    private static String text(JsonNode n) {
        return n != null && n.isTextual() ? n.textValue() : null;
    }
}
