package dev.synapsehub.net;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.net.wire.CanonicalJson;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.MessageDigest;
import java.security.Signature;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.function.Consumer;

import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Capability cards over a real socket (contract §5.15, §6.6): a persistent card outlives its
 * connection and a restart of a journaled hub; a signed card is verified with Ed25519 (the
 * signed-frame rules of A2.2 / F8), and a card whose signature fails is refused with a typed
 * error and changes nothing; a pinned identity's signed card must be signed by its pinned key;
 * {@code card_remove} (ours) withdraws a persistent card for good.
 */
class CapabilityCardWireTest {
    @TempDir
    Path dir;

    private static JsonNode manifest(HubClient c) throws Exception {
        c.send(c.frame("manifest_request"));
        return c.awaitType("manifest_snapshot", WAIT).path("manifest");
    }

    @Test
    void aPersistentCardSurvivesDisconnectAndRestart() throws Exception {
        Path db = dir.resolve("cards.db");
        try (TestHub hub = TestHub.journaled(db)) {
            HubClient watch = hub.agent("ops/watch");
            HubClient seat = hub.agent("p/seat");
            ObjectNode ad = seat.frame("advertise");
            ad.put("description", "reviewer").put("persist", true).put("dispatchable", false);
            ad.putArray("skills").add("review");
            seat.send(ad);
            JsonNode card = watch.awaitType("capability_advertised", WAIT).path("card");
            assertThat(card.path("persistent").asBoolean()).isTrue();
            assertThat(card.path("dispatchable").asBoolean()).isFalse();
            HubClient live = hub.agent("p/live");
            live.send(live.frame("advertise").put("description", "live only"));
            watch.await(f -> "capability_advertised".equals(f.path("type").asText())
                    && "p/live".equals(f.path("agent").asText()), WAIT);
            seat.close();
            live.close();
            for (String gone : new String[] {"p/seat", "p/live"}) {
                watch.await(f -> "presence_update".equals(f.path("type").asText())
                        && "left".equals(f.path("event").asText()) && gone.equals(f.path("agent").asText()), WAIT);
            }
            JsonNode m = manifest(watch);
            assertThat(m).as("the live card went with its connection; the persistent one stays").hasSize(1);
            assertThat(m.get(0).path("agent").asText()).isEqualTo("p/seat");
            assertThat(m.get(0)).isEqualTo(card);
        }
        try (TestHub hub = TestHub.journaled(db)) {
            HubClient watch = hub.agent("ops/watch");
            JsonNode m = manifest(watch);
            assertThat(m).hasSize(1);
            assertThat(m.get(0).path("agent").asText()).isEqualTo("p/seat");
            assertThat(m.get(0).path("description").asText()).isEqualTo("reviewer");
            assertThat(m.get(0).path("skills").toString()).isEqualTo("[\"review\"]");
            assertThat(m.get(0).path("persistent").asBoolean()).isTrue();
            // a later persistent advertise replaces it, also across a restart
            HubClient seat = hub.agent("p/seat");
            seat.send(seat.frame("advertise").put("description", "lead reviewer").put("persist", true));
            watch.await(f -> "capability_advertised".equals(f.path("type").asText()), WAIT);
        }
        try (TestHub hub = TestHub.journaled(db)) {
            HubClient watch = hub.agent("ops/watch");
            JsonNode m = manifest(watch);
            assertThat(m).hasSize(1);
            assertThat(m.get(0).path("description").asText()).isEqualTo("lead reviewer");
        }
    }

    // ------------------------------------------------------------------------ signed cards

    private final KeyPair keys = ed25519();

    private static KeyPair ed25519() {
        try {
            return KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static String rawPublicKey(KeyPair pair) {
        byte[] spki = pair.getPublic().getEncoded(); // the raw key is the last 32 bytes (RFC 8410)
        return Base64.getEncoder().encodeToString(Arrays.copyOfRange(spki, spki.length - 32, spki.length));
    }

    /** The canonical bytes the hub verifies: the frame without signature.value (contract §9 rules). */
    private static byte[] signedBytes(ObjectNode frame) {
        ObjectNode copy = frame.deepCopy();
        ((ObjectNode) copy.get("signature")).remove("value");
        return CanonicalJson.write(copy, false).getBytes(StandardCharsets.UTF_8);
    }

    /** A signed advertise from {@code c}; {@code beforeSigning} may change the frame first. */
    private ObjectNode signedAdvertise(HubClient c, String nonce, Consumer<ObjectNode> beforeSigning) throws Exception {
        return signedAdvertise(c.frame("advertise"), keys, "machine-1", rawPublicKey(keys), nonce, beforeSigning);
    }

    /** {@code ad} signed by {@code signer}, naming {@code keyId} and {@code publicKey}. */
    private static ObjectNode signedAdvertise(ObjectNode ad, KeyPair signer, String keyId, String publicKey, String nonce,
                                              Consumer<ObjectNode> beforeSigning) throws Exception {
        ad.put("description", "signed builder \u00e9");
        ad.putArray("skills").add("java");
        ObjectNode sig = ad.putObject("signature");
        sig.put("version", 1).put("key_id", keyId).put("algorithm", "ed25519")
                .put("public_key", publicKey).put("nonce", nonce).put("sequence", 1)
                .put("signed_at", System.currentTimeMillis() / 1000.0);
        beforeSigning.accept(ad);
        Signature ed = Signature.getInstance("Ed25519");
        ed.initSign(signer.getPrivate());
        ed.update(signedBytes(ad));
        sig.put("value", Base64.getEncoder().encodeToString(ed.sign()));
        return ad;
    }

    private static JsonNode refusal(HubClient c) throws Exception {
        JsonNode e = c.awaitType("error", WAIT);
        assertThat(e.path("error_code").asText()).isEqualTo("bad_signature");
        assertThat(e.path("field").asText()).isEqualTo("signature");
        return e;
    }

    @Test
    void aValidSignedCardIsVerifiedAndABadSignatureIsRefusedAndChangesNothing() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient watch = hub.agent("ops/watch");
            HubClient a = hub.agent("p/alpha");

            ObjectNode good = signedAdvertise(a, "n-1", f -> { });
            a.send(good);
            JsonNode card = watch.awaitType("capability_advertised", WAIT).path("card");
            JsonNode v = card.path("verification");
            assertThat(v.path("result").asText()).isEqualTo("valid");
            assertThat(v.path("key_id").asText()).isEqualTo("machine-1");
            assertThat(v.path("sequence").asLong()).isEqualTo(1);
            assertThat(v.path("signed_at").asDouble()).isEqualTo(good.path("signature").path("signed_at").asDouble());
            assertThat(v.path("card_digest").asText()).isEqualTo(HexFormat.of().formatHex(
                    MessageDigest.getInstance("SHA-256").digest(signedBytes(good))));
            assertThat(card.path("signature").path("key_id").asText()).isEqualTo("machine-1");

            // the same signed frame again: replayed
            a.send(good);
            assertThat(refusal(a).path("verification_result").asText()).isEqualTo("replayed");

            // tampered after signing
            ObjectNode tampered = signedAdvertise(a, "n-2", f -> { });
            tampered.put("description", "someone else");
            a.send(tampered);
            assertThat(refusal(a).path("verification_result").asText()).isEqualTo("bad_signature");

            // signed by another key than the one it names
            ObjectNode otherKey = signedAdvertise(a, "n-3", f -> { });
            ((ObjectNode) otherKey.get("signature")).put("public_key", rawPublicKey(ed25519()));
            a.send(otherKey);
            assertThat(refusal(a).path("verification_result").asText()).isEqualTo("bad_signature");

            ObjectNode stale = signedAdvertise(a, "n-4", f -> ((ObjectNode) f.get("signature"))
                    .put("signed_at", System.currentTimeMillis() / 1000.0 - 60));
            a.send(stale);
            assertThat(refusal(a).path("verification_result").asText()).isEqualTo("expired");

            ObjectNode badKey = signedAdvertise(a, "n-5", f -> ((ObjectNode) f.get("signature"))
                    .put("public_key", "not base64"));
            a.send(badKey);
            assertThat(refusal(a).path("verification_result").asText()).isEqualTo("unknown_key");

            ObjectNode badSeq = signedAdvertise(a, "n-6", f -> ((ObjectNode) f.get("signature")).put("sequence", 0));
            a.send(badSeq);
            assertThat(refusal(a).path("verification_result").asText()).isEqualTo("sequence_mismatch");

            ObjectNode persisted = signedAdvertise(a, "n-7", f -> f.put("persist", true)
                    .put("description", "must not register"));
            persisted.put("description", "tampered persistent");
            a.send(persisted);
            assertThat(refusal(a).path("verification_result").asText()).isEqualTo("bad_signature");

            // nothing changed: the watcher saw one card, the manifest holds the valid one only
            JsonNode m = manifest(watch);
            assertThat(m).hasSize(1);
            assertThat(m.get(0)).isEqualTo(card);
            assertThat(watch.received().stream().filter(f -> "capability_advertised".equals(f.path("type").asText())))
                    .hasSize(1);
        }
    }

    @Test
    void aSignedPersistentCardKeepsItsVerificationAcrossARestart() throws Exception {
        Path db = dir.resolve("signed.db");
        JsonNode card;
        try (TestHub hub = TestHub.journaled(db)) {
            HubClient watch = hub.agent("ops/watch");
            HubClient a = hub.agent("p/alpha");
            a.send(signedAdvertise(a, "n-1", f -> f.put("persist", true)));
            card = watch.awaitType("capability_advertised", WAIT).path("card");
            assertThat(card.path("verification").path("result").asText()).isEqualTo("valid");
        }
        try (TestHub hub = TestHub.journaled(db)) {
            HubClient watch = hub.agent("ops/watch");
            JsonNode m = manifest(watch);
            assertThat(m).hasSize(1);
            assertThat(m.get(0)).isEqualTo(card);
        }
    }

    // ------------------------------------------------------------------------ keys bound to identities

    @Test
    void aSignedCardOfAPinnedIdentityMustBeSignedByItsPinnedKey() throws Exception {
        HubConfig.Builder pinning = HubConfig.builder().identityPins(
                new dev.synapsehub.net.identity.IdentityPinSettings(true, null, dev.synapsehub.net.identity.PinReclaimAcl.NONE));
        try (TestHub hub = new TestHub(pinning)) {
            HubClient watch = hub.agent("ops/watch");
            IdentityKey pinned = IdentityKey.generate();
            HubClient a = hub.connect();
            a.send(pinned.registration("p/pinned"));
            a.awaitWhileOpen(f -> "presence_update".equals(f.path("type").asText())
                    && "p/pinned".equals(f.path("agent").asText()) && "joined".equals(f.path("event").asText()), WAIT);
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (hub.actor.committedPin("p/pinned").isEmpty()) { // the pin commits on the writer after the binding
                assertThat(System.nanoTime()).as("p/pinned is pinned in time").isLessThan(deadline);
                Thread.sleep(5);
            }

            // another key, under its own key id: refused, typed, nothing stored or broadcast
            a.send(signedAdvertise(HubClient.requestFrame("p/pinned", "advertise"), keys, "machine-1", rawPublicKey(keys),
                    "k-1", f -> f.put("persist", true)));
            JsonNode other = a.awaitType("error", WAIT);
            assertThat(other.path("error_code").asText()).isEqualTo("card_key_not_pinned");
            assertThat(other.path("field").asText()).isEqualTo("signature");
            assertThat(other.path("pinned_key_id").asText()).isEqualTo(pinned.keyId);
            // another key claiming the pinned key id (its own signature is valid): refused as well
            a.send(signedAdvertise(HubClient.requestFrame("p/pinned", "advertise"), keys, pinned.keyId, rawPublicKey(keys),
                    "k-2", f -> { }));
            JsonNode sameId = a.awaitType("error", WAIT);
            assertThat(sameId.path("error_code").asText()).isEqualTo("card_key_not_pinned");
            assertThat(sameId.path("payload").asText()).contains("is not the pinned one");

            // the pinned key: verified and registered
            a.send(signedAdvertise(HubClient.requestFrame("p/pinned", "advertise"), pinned.pair, pinned.keyId,
                    pinned.publicKey, "k-3", f -> f.put("persist", true)));
            JsonNode card = watch.awaitType("capability_advertised", WAIT).path("card");
            assertThat(card.path("agent").asText()).isEqualTo("p/pinned");
            assertThat(card.path("verification").path("result").asText()).isEqualTo("valid");
            assertThat(card.path("verification").path("key_id").asText()).isEqualTo(pinned.keyId);

            // an identity that is not pinned signs with whatever key it names, and an unsigned card stays allowed
            HubClient free = hub.agent("p/free");
            free.send(signedAdvertise(free, "k-4", f -> { }));
            watch.await(f -> "capability_advertised".equals(f.path("type").asText())
                    && "p/free".equals(f.path("agent").asText()), WAIT);
            a.send(HubClient.requestFrame("p/pinned", "advertise").put("description", "unsigned"));
            watch.await(f -> "capability_advertised".equals(f.path("type").asText())
                    && "unsigned".equals(f.path("card").path("description").asText()), WAIT);

            assertThat(watch.received().stream().filter(f -> "capability_advertised".equals(f.path("type").asText())))
                    .as("the refused cards were never broadcast").hasSize(3);
            assertThat(hub.actor.read(st -> st.cards().find("p/pinned")).get().cardJson()).contains(pinned.keyId);
        }
    }

    // ------------------------------------------------------------------------ removal

    private static JsonNode remove(HubClient c, String agent) throws Exception {
        ObjectNode f = c.frame("card_remove");
        if (agent != null) {
            f.put("agent", agent);
        }
        c.send(f);
        return c.await(r -> "card_removed".equals(r.path("type").asText()) || "error".equals(r.path("type").asText()),
                WAIT);
    }

    @Test
    void cardRemoveWithdrawsAPersistentCardForGoodAndOnlyItsOwnerMay() throws Exception {
        Path db = dir.resolve("removal.db");
        try (TestHub hub = TestHub.journaled(db)) {
            HubClient watch = hub.agent("ops/watch");
            HubClient seat = hub.agent("p/seat");
            HubClient keep = hub.agent("p/keep");
            seat.send(seat.frame("advertise").put("description", "goes").put("persist", true));
            keep.send(keep.frame("advertise").put("description", "stays").put("persist", true));
            for (String agent : new String[] {"p/seat", "p/keep"}) {
                watch.await(f -> "capability_advertised".equals(f.path("type").asText())
                        && agent.equals(f.path("agent").asText()), WAIT);
            }

            JsonNode refused = remove(keep, "p/seat");
            assertThat(refused.path("type").asText()).isEqualTo("error");
            assertThat(refused.path("error_code").asText()).isEqualTo("not_authorised");
            assertThat(manifest(watch)).as("a refused removal changes nothing").hasSize(2);

            JsonNode removed = remove(seat, null);
            assertThat(removed.path("type").asText()).isEqualTo("card_removed");
            assertThat(removed.path("agent").asText()).isEqualTo("p/seat");
            assertThat(removed.path("removed_persistent").asBoolean()).isTrue();
            assertThat(removed.path("removed_live").asBoolean()).isTrue();
            JsonNode m = manifest(watch);
            assertThat(m).hasSize(1);
            assertThat(m.get(0).path("agent").asText()).isEqualTo("p/keep");

            JsonNode again = remove(seat, "p/seat");
            assertThat(again.path("removed_persistent").asBoolean()).isFalse();
            assertThat(again.path("removed_live").asBoolean()).isFalse();
        }
        try (TestHub hub = TestHub.journaled(db)) {
            HubClient watch = hub.agent("ops/watch");
            JsonNode m = manifest(watch);
            assertThat(m).as("the removal is journaled: it holds after a restart").hasSize(1);
            assertThat(m.get(0).path("agent").asText()).isEqualTo("p/keep");
            assertThat(m.get(0).path("description").asText()).isEqualTo("stays");
        }
    }
}
