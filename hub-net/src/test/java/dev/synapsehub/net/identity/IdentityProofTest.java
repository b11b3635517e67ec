package dev.synapsehub.net.identity;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.net.auth.SigningTime;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.Signature;
import java.util.Arrays;
import java.util.Base64;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The proof bytes and key rules of contract A2.1–A2.2, without a socket, and the replay memory:
 * no flood of proofs makes another name's valid fresh proof {@code replayed}, and no true replay
 * inside the window is admitted.
 */
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

    private static final double NOW = 1_800_000_000.0;
    private static final SigningTime AT = SigningTime.at(NOW);

    /** A throwaway Ed25519 key signing version-1 registration proofs. */
    private record Signer(KeyPair pair, String publicKey) {
        static Signer generate() {
            try {
                KeyPair pair = KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
                byte[] der = pair.getPublic().getEncoded();
                return new Signer(pair, Base64.getEncoder().encodeToString(Arrays.copyOfRange(der, der.length - 32,
                        der.length)));
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException(e);
            }
        }

        String keyId() {
            return "key-" + publicKey.substring(0, 12);
        }

        ObjectNode proof(String sender) {
            return proof(sender, NOW);
        }

        ObjectNode proof(String sender, double signedAt) {
            return proof(sender, signedAt, keyId());
        }

        ObjectNode proof(String sender, double signedAt, String keyId) {
            ObjectNode f = MAPPER.createObjectNode().put("type", "heartbeat").put("sender", sender);
            f.put("identity_public_key", publicKey);
            f.putObject("signature").put("version", 1).put("key_id", keyId).put("algorithm", "ed25519")
                    .put("nonce", UUID.randomUUID().toString()).put("sequence", 1).put("signed_at", signedAt);
            try {
                Signature ed = Signature.getInstance("Ed25519");
                ed.initSign(pair.getPrivate());
                ed.update(IdentityProof.signedBytes(f, 1));
                ((ObjectNode) f.get("signature")).put("value", Base64.getEncoder().encodeToString(ed.sign()));
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException(e);
            }
            return f;
        }
    }

    /** The key id bound is for first use: a name pinned with a longer key id before the bound still proves itself. */
    @Test
    void aPinKeptWithAKeyIdLongerThanTheBoundStillVerifies() {
        IdentityProof proof = new IdentityProof();
        Signer old = Signer.generate();
        String longKeyId = "k".repeat(IdentityProof.MAX_KEY_ID_CHARACTERS + 44);
        assertThat(proof.verify(old.proof("p/old", NOW, longKeyId), "p/old", longKeyId, old.publicKey(), AT))
                .isEqualTo("ok");
        assertThat(proof.verifyFirstUse(old.proof("p/new", NOW, longKeyId), "p/new", old.publicKey(), AT,
                "127.0.0.1").result()).as("never pinned anew").isEqualTo("unknown_key");
    }

    /**
     * Review F1: first-use proofs of throwaway keys past the old global 4,096 entries; with one
     * cache that refused everything once full, the pinned agent got {@code replayed} (close 4013).
     */
    @Test
    void aFloodOfFirstUseProofsNeverLocksOutAPinnedName() {
        IdentityProof proof = new IdentityProof();
        Signer attacker = Signer.generate();
        for (int i = 0; i < 4_100; i++) {
            IdentityProof.Result r = proof.verifyFirstUse(attacker.proof("junk/" + i), "junk/" + i,
                    attacker.publicKey(), AT, "127.0.0.1");
            assertThat(r.result()).isEqualTo("ok");
            assertThat(r.pinnable()).as("only the host's share is remembered, and pinned")
                    .isEqualTo(i < IdentityProof.FIRST_USE_PER_HOST);
        }
        Signer victim = Signer.generate();
        ObjectNode legit = victim.proof("p/victim");
        assertThat(proof.verify(legit, "p/victim", victim.keyId(), victim.publicKey(), AT))
                .as("a fresh, valid proof of the pinned key").isEqualTo("ok");
        assertThat(proof.verify(legit, "p/victim", victim.keyId(), victim.publicKey(), AT))
                .as("its replay inside the window").isEqualTo("replayed");
        Signer newcomer = Signer.generate();
        assertThat(proof.verifyFirstUse(newcomer.proof("p/new"), "p/new", newcomer.publicKey(), AT, "127.0.0.2"))
                .as("another host's first use still pins").isEqualTo(new IdentityProof.Result("ok", true));
    }

    @Test
    void aFullShareRefusesOnlyItsOwnNameAndNeverForgetsALiveNonce() {
        IdentityProof proof = new IdentityProof(64, 2, 8, 4);
        Signer alice = Signer.generate();
        Signer bob = Signer.generate();
        ObjectNode first = alice.proof("p/alice");
        assertThat(proof.verify(first, "p/alice", alice.keyId(), alice.publicKey(), AT)).isEqualTo("ok");
        assertThat(proof.verify(alice.proof("p/alice"), "p/alice", alice.keyId(), alice.publicKey(), AT)).isEqualTo("ok");
        assertThat(proof.verify(alice.proof("p/alice"), "p/alice", alice.keyId(), alice.publicKey(), AT))
                .as("only alice's key fills alice's share").isEqualTo("replayed");
        assertThat(proof.verify(bob.proof("p/bob"), "p/bob", bob.keyId(), bob.publicKey(), AT)).isEqualTo("ok");
        assertThat(proof.verify(first, "p/alice", alice.keyId(), alice.publicKey(), SigningTime.at(NOW + 10)))
                .as("still remembered at the window's edge").isEqualTo("replayed");
        assertThat(proof.verify(alice.proof("p/alice", NOW + 10.5), "p/alice", alice.keyId(), alice.publicKey(),
                SigningTime.at(NOW + 10.5))).as("past the window the share is free again").isEqualTo("ok");
    }

    @Test
    void aFirstUseProofTheHubCouldNotRememberNeverLetsItsNameBePinnedInsideItsWindow() {
        IdentityProof proof = new IdentityProof(64, 4, 8, 1);
        Signer flood = Signer.generate();
        assertThat(proof.verifyFirstUse(flood.proof("x/0"), "x/0", flood.publicKey(), AT, "127.0.0.1").pinnable())
                .isTrue();
        Signer carol = Signer.generate();
        ObjectNode unremembered = carol.proof("p/carol");
        assertThat(proof.verifyFirstUse(unremembered, "p/carol", carol.publicKey(), AT, "127.0.0.1"))
                .as("admitted like an unsigned frame, not refused").isEqualTo(new IdentityProof.Result("ok", false));
        assertThat(proof.verifyFirstUse(carol.proof("p/carol"), "p/carol", carol.publicKey(), AT, "127.0.0.3"))
                .as("no pin while the unremembered proof could be replayed")
                .isEqualTo(new IdentityProof.Result("ok", false));
        SigningTime later = SigningTime.at(NOW + 11);
        Signer fresh = Signer.generate();
        assertThat(proof.verifyFirstUse(fresh.proof("p/carol", NOW + 11), "p/carol", fresh.publicKey(), later,
                "127.0.0.3")).as("pinnable once that window is over").isEqualTo(new IdentityProof.Result("ok", true));
    }
}
