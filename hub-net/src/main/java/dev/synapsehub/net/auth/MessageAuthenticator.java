package dev.synapsehub.net.auth;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.PythonWhitespace;
import dev.synapsehub.net.MessageAuthKey;
import dev.synapsehub.net.wire.CanonicalJson;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Per-message HMAC verification (contract §9), in the contract's order and result strings. */
public final class MessageAuthenticator {
    /** Verbs whose frames must be signed when enforcement is on. */
    public static final Set<String> SIGNED_VERBS = Set.of("claim", "release", "task_update", "handoff",
            "checkpoint", "resource", "resource_offer", "offer_resource");

    /** The longest nonce accepted (Python clients send 24 characters); a longer one is {@code bad_authentication}. */
    public static final int MAX_NONCE_LENGTH = 128;

    private final Map<String, MessageAuthKey> keys = new HashMap<>();
    private final boolean required;
    private final double window;
    private final double futureSkew;
    private final ReplayCache replay;
    /** Each key's share of the replay capacity: one signer's flood fills its own share only. */
    private final int perKey;

    public MessageAuthenticator(List<MessageAuthKey> keys, boolean required, double windowSeconds,
                                double futureSkewSeconds, int replayCapacity) {
        keys.forEach(k -> this.keys.put(k.keyId(), k));
        this.required = required;
        this.window = windowSeconds;
        this.futureSkew = futureSkewSeconds;
        this.replay = new ReplayCache(replayCapacity, windowSeconds);
        this.perKey = Math.max(1, replayCapacity / Math.max(1, this.keys.size()));
    }

    /** True when frames of {@code verb} must carry a valid {@code auth}. */
    public boolean appliesTo(String verb) {
        return required && SIGNED_VERBS.contains(verb);
    }

    /**
     * Verifies a frame as received (minus the connect token). The timestamp is compared with the
     * wall clock ({@code at.wall()}), which the signer reads too, not hub time, which lags a
     * wall-clock step for as long as it takes to slew (INV-CK-2).
     *
     * @return {@code ok} or the contract's failure string
     */
    public String verify(ObjectNode received, String boundName, SigningTime at) {
        double now = at.wall();
        JsonNode auth = received.get("auth");
        if (auth == null || !auth.isObject()) {
            return "missing";
        }
        JsonNode kid = auth.get("kid");
        MessageAuthKey key = kid != null && kid.isTextual() ? keys.get(kid.textValue()) : null;
        if (key == null) {
            return "unknown_key";
        }
        JsonNode sender = received.get("sender");
        String frameSender = sender != null && sender.isTextual() ? PythonWhitespace.strip(sender.textValue()) : null;
        if (frameSender == null || !frameSender.equals(boundName) || !key.senders().contains(boundName)) {
            return "sender_mismatch";
        }
        JsonNode alg = auth.get("alg");
        if (alg == null || !alg.isTextual() || !"hmac-sha256".equals(alg.textValue())) {
            return "bad_authentication";
        }
        JsonNode ts = auth.get("timestamp");
        JsonNode seq = auth.get("sequence");
        if (ts == null || seq == null || !ts.isNumber() || !Double.isFinite(ts.doubleValue())) {
            return "bad_authentication";
        }
        if (!seq.isIntegralNumber() || seq.bigIntegerValue().signum() <= 0) {
            return "sequence_mismatch";
        }
        double signedAt = ts.doubleValue();
        if (signedAt < now - window || signedAt > now + futureSkew) {
            return "expired";
        }
        JsonNode nonce = auth.get("nonce");
        JsonNode value = auth.get("value");
        if (nonce == null || !nonce.isTextual() || nonce.textValue().isEmpty()
                || nonce.textValue().length() > MAX_NONCE_LENGTH // each is remembered for the window
                || value == null || !value.isTextual() || value.textValue().isEmpty()) {
            return "bad_authentication";
        }
        String expected = mac(key.secret(), canonicalBytes(received));
        if (!MessageDigest.isEqual(expected.getBytes(StandardCharsets.US_ASCII),
                value.textValue().getBytes(StandardCharsets.UTF_8))) {
            return "bad_authentication";
        }
        ReplayCache.Admission admission = replay.admit(key.keyId(), boundName, nonce.textValue(), signedAt, at,
                List.of(new ReplayCache.Share(key.keyId(), perKey)));
        return admission == ReplayCache.Admission.ADMITTED ? "ok" : "replayed";
    }

    /**
     * Forgets the nonce of a frame {@link #verify} admitted that was then refused with nothing
     * applied (busy): the contract's "retry shortly" must not meet {@code replayed}.
     */
    public void release(ObjectNode verified, String boundName) {
        JsonNode auth = verified.get("auth");
        if (auth != null && auth.get("kid") != null && auth.get("nonce") != null) {
            replay.release(auth.get("kid").asText(), boundName, auth.get("nonce").asText());
        }
    }

    /** The signed text: the frame minus {@code token} and {@code auth.value}, canonical (§9). */
    public static String canonicalBytes(ObjectNode received) {
        ObjectNode copy = received.deepCopy();
        copy.remove("token");
        JsonNode auth = copy.get("auth");
        if (auth instanceof ObjectNode authObject) {
            authObject.remove("value");
        }
        return CanonicalJson.write(copy, false);
    }

    /** Lowercase hex HMAC-SHA256 of {@code text} under the UTF-8 bytes of {@code secret}. */
    public static String mac(String secret, String text) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
            return HexFormat.of().formatHex(mac.doFinal(text.getBytes(StandardCharsets.UTF_8)));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }
}
