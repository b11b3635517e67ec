package dev.synapsehub.net;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.net.wire.CanonicalJson;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.MessageDigest;
import java.security.Signature;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.UUID;

/**
 * A test agent's Ed25519 identity key, signing registration frames the way reference clients
 * do (contract A2.1–A2.2): {@code key_id} = {@code machine-} + 16 hex of SHA-256 of the base64
 * key text; the signed bytes are the canonical frame minus {@code signature.value}, prefixed by
 * the domain and a NUL byte for version 2.
 */
final class IdentityKey {
    static final String DOMAIN = "aef:legacy-event:v0.1";

    final KeyPair pair;
    final String publicKey;
    final String keyId;

    private IdentityKey(KeyPair pair) {
        this.pair = pair;
        byte[] der = pair.getPublic().getEncoded();
        this.publicKey = Base64.getEncoder().encodeToString(Arrays.copyOfRange(der, der.length - 32, der.length));
        try {
            this.keyId = "machine-" + HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                    .digest(publicKey.getBytes(StandardCharsets.US_ASCII))).substring(0, 16);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    static IdentityKey generate() {
        try {
            return new IdentityKey(KeyPairGenerator.getInstance("Ed25519").generateKeyPair());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A signed registration heartbeat from {@code sender}, version 1, signed now with a fresh nonce. */
    ObjectNode registration(String sender) {
        return registration(sender, 1, System.currentTimeMillis() / 1000.0);
    }

    /** A signed registration heartbeat. */
    ObjectNode registration(String sender, int version, double signedAt) {
        ObjectNode f = HubClient.requestFrame(sender, "heartbeat");
        f.put("payload", "online");
        f.put("identity_public_key", publicKey);
        ObjectNode sig = f.putObject("signature");
        sig.put("version", version);
        sig.put("key_id", keyId);
        sig.put("algorithm", "ed25519");
        sig.put("nonce", UUID.randomUUID().toString());
        sig.put("sequence", 1);
        sig.put("signed_at", signedAt);
        if (version == 2) {
            sig.put("domain", DOMAIN);
        }
        return sign(f);
    }

    /** (Re)signs {@code frame} as it stands, replacing any {@code signature.value}. */
    ObjectNode sign(ObjectNode frame) {
        ObjectNode sig = (ObjectNode) frame.get("signature");
        sig.remove("value");
        byte[] body = CanonicalJson.write(frame, false).getBytes(StandardCharsets.UTF_8);
        byte[] message = body;
        if (sig.path("version").asInt() == 2) {
            message = new byte[DOMAIN.length() + 1 + body.length];
            System.arraycopy(DOMAIN.getBytes(StandardCharsets.US_ASCII), 0, message, 0, DOMAIN.length());
            System.arraycopy(body, 0, message, DOMAIN.length() + 1, body.length);
        }
        try {
            Signature s = Signature.getInstance("Ed25519");
            s.initSign(pair.getPrivate());
            s.update(message);
            sig.put("value", Base64.getEncoder().encodeToString(s.sign()));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
        return frame;
    }
}
