package dev.synapsehub.net.identity;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.net.auth.MessageAuthenticator;
import dev.synapsehub.net.auth.ReplayCache;
import dev.synapsehub.net.auth.SigningTime;
import dev.synapsehub.net.wire.CanonicalJson;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The Ed25519 registration proof of wire contract A2.1–A2.2: checks a first frame's
 * {@code signature} object in the contract's order and gives its result string ({@code ok},
 * {@code unknown_key}, {@code sender_mismatch}, {@code bad_signature}, {@code invalid_domain},
 * {@code sequence_mismatch}, {@code expired}, {@code replayed}). Uses the JDK's Ed25519.
 * Thread-safe.
 *
 * <p>Replay memory (A2.2: (key id, sender, nonce) refused inside the window) is shared so that no
 * flood can make a valid fresh proof {@code replayed}: a proof for a pinned (or bundle) name is
 * charged to that name, at most {@link #PER_NAME} at once, and only the name's key holder can make
 * one; a first-use proof, which anyone can make with a throwaway key, is charged to a separate
 * pool of {@link #FIRST_USE_CAPACITY}, at most {@link #FIRST_USE_PER_HOST} per remote host. When a
 * valid first-use proof finds its pool full it is not remembered, and instead of being refused it
 * is admitted without pinning, as a first frame without a proof would be (A2.3, last row); its
 * name then cannot be pinned until that proof's window is over, so a later replay of it meets an
 * unpinned name, never a pin it could pass. Bound: {@link #REPLAY_CAPACITY} nonces in all.
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
    /**
     * Accepted (key id, sender, nonce) identities remembered inside the window, at most (A2.2 says
     * 4096; ours is larger and shared out, see above): each needs one Ed25519 verification, so
     * filling it takes over 20,000 verified proofs a second.
     */
    public static final int REPLAY_CAPACITY = 262_144;
    /** Proofs for one pinned or bundle name remembered at once: ~3 registrations a second over the window. */
    public static final int PER_NAME = 32;
    /** First-use proofs remembered at once, from every host together. */
    public static final int FIRST_USE_CAPACITY = 16_384;
    /** First-use proofs remembered at once from one remote host. */
    public static final int FIRST_USE_PER_HOST = 1_024;
    /** Slots of the table of names whose first-use proof was admitted unremembered (no pin until it expires). */
    private static final int UNPINNABLE_SLOTS = 4096;

    /** A verified proof's result; {@code pinnable} is false for a first-use proof the hub could not remember. */
    public record Result(String result, boolean pinnable) {
        /** True when the proof may bind its name. */
        public boolean ok() {
            return "ok".equals(result);
        }

        static Result refused(String result) {
            return new Result(result, false);
        }
    }

    /** The DER prefix of an X.509 SubjectPublicKeyInfo for a raw 32-byte Ed25519 key (RFC 8410). */

    private final ReplayCache replay;
    private final int perName;
    private final int firstUse;
    private final int perHost;
    /** Hub time until which first-use pins of names hashed to a slot are not made; guarded by {@code this}. */
    private final double[] unpinnableUntil = new double[UNPINNABLE_SLOTS];

    /** A verifier with the default replay bounds. */
    public IdentityProof() {
        this(REPLAY_CAPACITY, PER_NAME, FIRST_USE_CAPACITY, FIRST_USE_PER_HOST);
    }

    /** A verifier with smaller replay bounds (tests). */
    IdentityProof(int capacity, int perName, int firstUse, int perHost) {
        this.replay = new ReplayCache(capacity, WINDOW_SECONDS);
        this.perName = perName;
        this.firstUse = firstUse;
        this.perHost = perHost;
    }

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
        return check(received, sender, expectedKeyId, publicKey, at, "").result();
    }

    /**
     * Verifies a first-use proof (the name is not pinned) from {@code remoteHost}, with the key the
     * frame presents. {@code ok} with {@code pinnable} false: admit, but pin nothing.
     */
    public Result verifyFirstUse(ObjectNode received, String sender, String publicKey, SigningTime at,
            String remoteHost) {
        return check(received, sender, null, publicKey, at, remoteHost == null ? "" : remoteHost);
    }

    private Result check(ObjectNode received, String sender, String expectedKeyId, String publicKey, SigningTime at,
            String remoteHost) {
        String result = verifySignature(received, sender, expectedKeyId, publicKey, at);
        if (!"ok".equals(result)) {
            return Result.refused(result);
        }
        JsonNode signature = received.get("signature");
        String keyId = signature.get("key_id").textValue();
        String nonce = signature.get("nonce").textValue();
        double signedAt = signature.get("signed_at").doubleValue();
        if (expectedKeyId != null) {
            ReplayCache.Admission admission = replay.admit(keyId, sender, nonce, signedAt, at,
                    List.of(new ReplayCache.Share("name\0" + sender, perName)));
            return admission == ReplayCache.Admission.ADMITTED ? new Result("ok", false) : Result.refused("replayed");
        }
        ReplayCache.Admission admission = replay.admit(keyId, sender, nonce, signedAt, at, List.of(
                new ReplayCache.Share("first-use", firstUse),
                new ReplayCache.Share("host\0" + remoteHost, perHost)));
        int slot = Math.floorMod(sender.hashCode(), UNPINNABLE_SLOTS);
        synchronized (this) {
            switch (admission) {
                case REPLAYED -> {
                    return Result.refused("replayed");
                }
                case FULL -> {
                    // not remembered: no pin of this name while this proof could still be replayed
                    double until = at.steady() + Math.max(0, signedAt + WINDOW_SECONDS - at.wall());
                    unpinnableUntil[slot] = Math.max(unpinnableUntil[slot], until);
                    return new Result("ok", false);
                }
                default -> {
                    return new Result("ok", unpinnableUntil[slot] < at.steady());
                }
            }
        }
    }

    private String verifySignature(ObjectNode received, String sender, String expectedKeyId, String publicKey,
            SigningTime at) {
        double now = at.wall();
        JsonNode signature = received.get("signature");
        if (signature == null || !signature.isObject()) {
            return "missing_signature";
        }
        JsonNode keyId = signature.get("key_id");
        // the length bound is for what a first use would pin; a pin kept from before the bound is still honoured
        if (keyId == null || !keyId.isTextual() || keyId.textValue().isEmpty()
                || (expectedKeyId == null
                        && keyId.textValue().codePointCount(0, keyId.textValue().length()) > MAX_KEY_ID_CHARACTERS)
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
                || nonce.textValue().length() > MessageAuthenticator.MAX_NONCE_LENGTH // remembered for the window
                || value == null || !value.isTextual() || value.textValue().isEmpty()) {
            return "bad_signature";
        }
        if (!Ed25519.verifies(rawKey, signedBytes(received, v), Ed25519.signature(value.textValue()))) {
            return "bad_signature";
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
