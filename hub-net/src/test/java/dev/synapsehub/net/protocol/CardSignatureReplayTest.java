package dev.synapsehub.net.protocol;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.net.auth.SigningTime;
import org.junit.jupiter.api.Test;

import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.Signature;
import java.util.Arrays;
import java.util.Base64;

import static org.assertj.core.api.Assertions.assertThat;

/** The signed-card nonce cache: one agent's flood of signed cards refuses only its own, and nonces are bounded. */
class CardSignatureReplayTest {
    private static final double NOW = 1_800_000_000.0;
    private final KeyPair keys = ed25519();

    private static KeyPair ed25519() {
        try {
            return KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private ObjectNode card(String agent, String nonce) throws Exception {
        ObjectNode ad = JsonNodeFactory.instance.objectNode();
        ad.put("type", "advertise").put("sender", agent).put("description", "builder");
        byte[] spki = keys.getPublic().getEncoded();
        ObjectNode sig = ad.putObject("signature");
        sig.put("version", 1).put("key_id", "machine-1").put("algorithm", "ed25519")
                .put("public_key", Base64.getEncoder().encodeToString(Arrays.copyOfRange(spki, spki.length - 32,
                        spki.length)))
                .put("nonce", nonce).put("sequence", 1).put("signed_at", NOW);
        Signature ed = Signature.getInstance("Ed25519");
        ed.initSign(keys.getPrivate());
        ed.update(CardSignature.signedBytes(ad));
        sig.put("value", Base64.getEncoder().encodeToString(ed.sign()));
        return ad;
    }

    @Test
    void oneAgentsFloodOfSignedCardsRefusesOnlyItsOwn() throws Exception {
        CardSignature cards = new CardSignature();
        SigningTime at = SigningTime.at(NOW);
        for (int i = 0; i < CardSignature.NONCES_PER_AGENT; i++) {
            assertThat(cards.verify(card("p/flood", "n-" + i), "p/flood", at, NOW).result()).isEqualTo("valid");
        }
        CardSignature.Verification over = cards.verify(card("p/flood", "n-over"), "p/flood", at, NOW);
        assertThat(over.result()).isEqualTo("replayed");
        assertThat(over.detail()).contains("too many signed cards from p/flood");
        // another agent's fresh card is unaffected, and a true replay of it is still refused
        assertThat(cards.verify(card("p/other", "n-0"), "p/other", at, NOW).result()).isEqualTo("valid");
        CardSignature.Verification again = cards.verify(card("p/other", "n-0"), "p/other", at, NOW);
        assertThat(again.result()).isEqualTo("replayed");
        assertThat(again.detail()).isEqualTo("this nonce was already used");
        // the window passed: the flooding agent's share is free again
        SigningTime later = SigningTime.at(NOW + 30);
        assertThat(cards.verify(cardAt("p/flood", "n-late", NOW + 30), "p/flood", later, NOW + 30).result())
                .isEqualTo("valid");
    }

    private ObjectNode cardAt(String agent, String nonce, double signedAt) throws Exception {
        ObjectNode ad = card(agent, nonce);
        ((ObjectNode) ad.get("signature")).put("signed_at", signedAt).remove("value");
        Signature ed = Signature.getInstance("Ed25519");
        ed.initSign(keys.getPrivate());
        ed.update(CardSignature.signedBytes(ad));
        ((ObjectNode) ad.get("signature")).put("value", Base64.getEncoder().encodeToString(ed.sign()));
        return ad;
    }

    @Test
    void aNonceLongerThan128CharactersIsABadSignatureAndNotRemembered() throws Exception {
        CardSignature cards = new CardSignature();
        CardSignature.Verification v = cards.verify(card("p/a", "n".repeat(129)), "p/a", SigningTime.at(NOW), NOW);
        assertThat(v.result()).isEqualTo("bad_signature");
        assertThat(v.detail()).contains("longer than 128");
        assertThat(cards.verify(card("p/a", "n".repeat(128)), "p/a", SigningTime.at(NOW), NOW).result())
                .isEqualTo("valid");
    }
}
