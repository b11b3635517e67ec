package dev.synapsehub.mesh;

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
 * A test agent's Ed25519 identity key, signing a registration frame as reference clients do
 * (wire contract A2.1–A2.2, version 1): {@code key_id} = {@code machine-} + 16 hex of SHA-256 of
 * the base64 key; the signed bytes are the canonical frame without {@code signature.value}.
 */
final class AgentKey {
    final String publicKey;
    final String keyId;
    private final KeyPair pair;

    private AgentKey(KeyPair pair) {
        this.pair = pair;
        byte[] der = pair.getPublic().getEncoded(); // X.509: the raw 32-byte key is the tail
        this.publicKey = Base64.getEncoder().encodeToString(Arrays.copyOfRange(der, der.length - 32, der.length));
        try {
            this.keyId = "machine-" + HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                    .digest(publicKey.getBytes(StandardCharsets.US_ASCII))).substring(0, 16);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    static AgentKey generate() {
        try {
            return new AgentKey(KeyPairGenerator.getInstance("Ed25519").generateKeyPair());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A registration heartbeat from {@code sender}, signed now with a fresh nonce. */
    ObjectNode registration(String sender) {
        return registration(sender, false);
    }

    /** Like {@link #registration(String)}, asking for an ownership lease when {@code lease}. */
    ObjectNode registration(String sender, boolean lease) {
        ObjectNode f = HubClient.requestFrame(sender, "heartbeat");
        f.put("payload", "online");
        if (lease) {
            f.put("lease", true);
        }
        f.put("identity_public_key", publicKey);
        ObjectNode sig = f.putObject("signature");
        sig.put("version", 1);
        sig.put("key_id", keyId);
        sig.put("algorithm", "ed25519");
        sig.put("nonce", UUID.randomUUID().toString());
        sig.put("sequence", 1);
        sig.put("signed_at", System.currentTimeMillis() / 1000.0);
        byte[] body = CanonicalJson.write(f, false).getBytes(StandardCharsets.UTF_8);
        try {
            Signature s = Signature.getInstance("Ed25519");
            s.initSign(pair.getPrivate());
            s.update(body);
            sig.put("value", Base64.getEncoder().encodeToString(s.sign()));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
        return f;
    }
}
