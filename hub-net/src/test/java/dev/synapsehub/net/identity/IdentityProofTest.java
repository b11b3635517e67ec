package dev.synapsehub.net.identity;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.net.auth.SigningTime;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Base64;

import static org.assertj.core.api.Assertions.assertThat;

/** The proof bytes and key rules of contract A2.1–A2.2, without a socket. */
class IdentityProofTest {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    @Test
    void theSignedBytesAreTheCanonicalFrameWithTokenAndWithoutTheValue() throws Exception {
        ObjectNode frame = (ObjectNode) MAPPER.readTree("{\"type\":\"heartbeat\",\"sender\":\"p/a\",\"token\":\"t\","
                + "\"n\":1.0,\"caf\\u00e9\":\"\\u00e9\",\"signature\":{\"version\":1,\"key_id\":\"k\",\"value\":\"sig\"}}");
        String body = "{\"caf\u00e9\":\"\u00e9\",\"n\":1.0,\"sender\":\"p/a\",\"signature\":{\"key_id\":\"k\",\"version\":1},"
                + "\"token\":\"t\",\"type\":\"heartbeat\"}";
        assertThat(new String(IdentityProof.signedBytes(frame, 1), StandardCharsets.UTF_8)).isEqualTo(body);
        assertThat(new String(IdentityProof.signedBytes(frame, 2), StandardCharsets.UTF_8))
                .isEqualTo("aef:legacy-event:v0.1\u0000" + body);
        assertThat(frame.path("signature").path("value").asText()).as("the frame itself is untouched").isEqualTo("sig");
    }

    @Test
    void aPublicKeyIsStrictStandardBase64OfThirtyTwoBytes() {
        byte[] raw = new byte[32];
        raw[0] = (byte) 0xfb; // '+' and '/' appear in standard base64, '-' and '_' in the URL alphabet
        raw[1] = (byte) 0xff;
        String standard = Base64.getEncoder().encodeToString(raw);
        assertThat(Ed25519.rawPublicKey(standard)).isEqualTo(raw);
        assertThat(Ed25519.rawPublicKey(Base64.getUrlEncoder().encodeToString(raw))).isNull();
        assertThat(Ed25519.rawPublicKey(standard.substring(0, standard.length() - 1))).as("unpadded").isNull();
        assertThat(Ed25519.rawPublicKey(Base64.getEncoder().encodeToString(new byte[31]))).isNull();
        assertThat(Ed25519.rawPublicKey(" " + standard)).isNull();
        assertThat(Ed25519.rawPublicKey("")).isNull();
    }

    @Test
    void theChecksRunInTheContractsOrder() throws Exception {
        IdentityProof proof = new IdentityProof();
        String key = Base64.getEncoder().encodeToString(new byte[32]);
        ObjectNode f = (ObjectNode) MAPPER.readTree("{\"sender\":\"p/b\",\"signature\":{\"key_id\":\"k\","
                + "\"algorithm\":\"rsa\",\"version\":3,\"sequence\":0,\"signed_at\":0}}");
        assertThat(proof.verify(f, "p/b", "other", key, SigningTime.at(100))).isEqualTo("unknown_key");
        assertThat(proof.verify(f, "p/b", null, "AAAA", SigningTime.at(100))).isEqualTo("unknown_key");
        assertThat(proof.verify(f, "p/a", null, key, SigningTime.at(100))).isEqualTo("sender_mismatch");
        assertThat(proof.verify(f, "p/b", null, key, SigningTime.at(100))).isEqualTo("bad_signature");
        ((ObjectNode) f.get("signature")).put("algorithm", "ed25519").put("version", 2);
        assertThat(proof.verify(f, "p/b", null, key, SigningTime.at(100))).isEqualTo("invalid_domain");
        ((ObjectNode) f.get("signature")).put("domain", IdentityProof.DOMAIN).put("signed_at", "soon");
        assertThat(proof.verify(f, "p/b", null, key, SigningTime.at(100))).isEqualTo("bad_signature");
        ((ObjectNode) f.get("signature")).put("signed_at", 0);
        assertThat(proof.verify(f, "p/b", null, key, SigningTime.at(100))).isEqualTo("sequence_mismatch");
        ((ObjectNode) f.get("signature")).put("sequence", 1);
        assertThat(proof.verify(f, "p/b", null, key, SigningTime.at(100))).isEqualTo("expired");
        ((ObjectNode) f.get("signature")).put("signed_at", 100);
        assertThat(proof.verify(f, "p/b", null, key, SigningTime.at(100))).as("no nonce, no value").isEqualTo("bad_signature");
        ((ObjectNode) f.get("signature")).put("nonce", "n").put("value", Base64.getEncoder().encodeToString(new byte[64]));
        assertThat(proof.verify(f, "p/b", null, key, SigningTime.at(100))).as("a signature that does not verify").isEqualTo("bad_signature");
    }
}
