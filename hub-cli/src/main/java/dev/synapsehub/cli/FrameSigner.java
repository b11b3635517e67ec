package dev.synapsehub.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.net.auth.MessageAuthenticator;

import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * Signs an operator command's claim-family frame with a message-auth key, as a hub with
 * {@code --require-message-auth} expects (docs/protocol.md, "Per-message HMAC").
 */
final class FrameSigner {
    private final String keyId;
    private final String secret;
    private final SecureRandom nonces = new SecureRandom();

    private FrameSigner(String keyId, String secret) {
        this.keyId = keyId;
        this.secret = secret;
    }

    /**
     * The key in {@code text}: {@code KEY_ID:SECRET}, or the hub's own form
     * {@code KEY_ID:SECRET:SENDER[,SENDER...]} (the senders are the hub's to check, not ours).
     */
    static FrameSigner parse(String text, String source) {
        String[] parts = text.strip().split(":", 3);
        if (parts.length < 2 || parts[0].isEmpty() || parts[1].isEmpty()) {
            throw new IllegalArgumentException(source + ": expected KEY_ID:SECRET (the key id and secret given to the"
                    + " hub's --message-auth-key)");
        }
        return new FrameSigner(parts[0], parts[1]);
    }

    /** Adds an {@code auth} object to {@code frame} when its verb is one a hub verifies; other frames stay as they are. */
    void sign(ObjectNode frame, double nowSeconds) {
        if (!MessageAuthenticator.SIGNED_VERBS.contains(frame.path("type").asText())) {
            return;
        }
        byte[] nonce = new byte[16];
        nonces.nextBytes(nonce);
        ObjectNode auth = frame.putObject("auth");
        auth.put("alg", "hmac-sha256").put("kid", keyId).put("nonce", HexFormat.of().formatHex(nonce))
                // increasing from one command to the next, for a hub that keeps a floor per key and sender
                .put("sequence", System.currentTimeMillis()).put("timestamp", nowSeconds);
        auth.put("value", MessageAuthenticator.mac(secret, MessageAuthenticator.canonicalBytes(frame)));
    }
}
