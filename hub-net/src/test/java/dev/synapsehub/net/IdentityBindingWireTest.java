package dev.synapsehub.net;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.net.identity.IdentityPinSettings;
import dev.synapsehub.net.identity.IdentityTrust;
import dev.synapsehub.net.identity.PinReclaimAcl;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The operator-bundle posture (contract A2.2, A2.4: {@code --require-identity-binding} with
 * {@code --identity-trust}) over a real socket: every first frame must prove the bundle's key for
 * its name; each failure is a private {@code error} {@code identity binding failed: <result>}
 * with {@code verification_result}, then close 4013 {@code identity binding failed}, for every
 * result the contract lists; a valid proof is admitted and pins nothing; the token check comes
 * first.
 */
class IdentityBindingWireTest {
    @TempDir
    Path dir;

    private final IdentityKey ann = IdentityKey.generate();
    private final IdentityKey bob = IdentityKey.generate();

    private TestHub hub(String token) throws InterruptedException {
        IdentityTrust trust = new IdentityTrust(Map.of(
                "p/ann", new IdentityTrust.TrustedKey(ann.keyId, ann.publicKey),
                "p/bob", new IdentityTrust.TrustedKey(bob.keyId, bob.publicKey)));
        return new TestHub(HubConfig.builder().token(token)
                .identityPins(new IdentityPinSettings(true, null, PinReclaimAcl.NONE, trust)));
    }

    private static HubClient admitted(TestHub hub, ObjectNode first) throws Exception {
        HubClient c = hub.connect();
        String name = first.path("sender").asText().strip();
        c.send(first);
        c.awaitWhileOpen(f -> "presence_update".equals(f.path("type").asText()) && name.equals(f.path("agent").asText())
                && "joined".equals(f.path("event").asText()), WAIT);
        return c;
    }

    private static void assertRefused(TestHub hub, ObjectNode first, String result) throws Exception {
        HubClient c = hub.connect();
        c.send(first);
        JsonNode error = c.await(f -> f.has("verification_result") || "auth_denied".equals(f.path("type").asText()),
                WAIT);
        assertThat(error.path("type").asText()).as(result).isEqualTo("error");
        assertThat(error.path("target").asText()).isEqualTo(first.path("sender").asText().strip());
        assertThat(error.path("verification_result").asText()).isEqualTo(result);
        assertThat(error.path("payload").asText()).isEqualTo("identity binding failed: " + result);
        assertThat(c.awaitClose(WAIT)).isEqualTo(new HubClient.CloseStatus(4013, "identity binding failed"));
    }

    private static ObjectNode unsigned(String sender) {
        ObjectNode f = HubClient.requestFrame(sender, "heartbeat");
        f.put("payload", "online");
        return f;
    }

    @Test
    void everyFailingProofIsRefusedWithItsResultAndClose4013() throws Exception {
        try (TestHub hub = hub(null)) {
            assertRefused(hub, unsigned("p/ann"), "missing_signature");
            assertRefused(hub, unsigned("p/nobody"), "missing_signature");
            ObjectNode keyOnly = unsigned("p/ann").put("identity_public_key", ann.publicKey);
            assertRefused(hub, keyOnly, "missing_signature");

            assertRefused(hub, IdentityKey.generate().registration("p/carol"), "unknown_key"); // not in the bundle
            assertRefused(hub, bob.registration("p/ann"), "unknown_key"); // another name's key id
            assertRefused(hub, ann.registration("p/ann-rx"), "unknown_key"); // names are exact

            IdentityKey impostor = IdentityKey.generate();
            ObjectNode forged = impostor.registration("p/ann");
            ((ObjectNode) forged.get("signature")).put("key_id", ann.keyId);
            assertRefused(hub, impostor.sign(forged), "bad_signature"); // the bundle's key id, another key
            ObjectNode tampered = ann.registration("p/ann");
            tampered.put("payload", "changed after signing");
            assertRefused(hub, tampered, "bad_signature");
            ObjectNode badAlgorithm = ann.registration("p/ann");
            ((ObjectNode) badAlgorithm.get("signature")).put("algorithm", "rsa");
            assertRefused(hub, ann.sign(badAlgorithm), "bad_signature");

            ObjectNode spaced = ann.registration(" p/ann ");
            assertRefused(hub, spaced, "sender_mismatch");

            ObjectNode domain = ann.registration("p/ann");
            ((ObjectNode) domain.get("signature")).put("domain", IdentityKey.DOMAIN); // forbidden in version 1
            assertRefused(hub, ann.sign(domain), "invalid_domain");

            ObjectNode sequence = ann.registration("p/ann");
            ((ObjectNode) sequence.get("signature")).put("sequence", 0);
            assertRefused(hub, ann.sign(sequence), "sequence_mismatch");

            assertRefused(hub, ann.registration("p/ann", 1, System.currentTimeMillis() / 1000.0 - 60), "expired");

            ObjectNode once = ann.registration("p/ann");
            admitted(hub, once.deepCopy()).close();
            assertRefused(hub, once, "replayed");
        }
    }

    @Test
    void aValidProofIsAdmittedAndPinsNothingAndTheTokenIsCheckedFirst() throws Exception {
        try (TestHub hub = hub("t0k")) {
            ObjectNode wrongToken = unsigned("p/ann").put("token", "nope");
            HubClient c = hub.connect();
            c.send(wrongToken);
            assertThat(c.await(f -> "auth_denied".equals(f.path("type").asText()), WAIT)).isNotNull();
            assertThat(c.awaitClose(WAIT).code()).isEqualTo(4010);

            ObjectNode first = ann.registration("p/ann");
            first.put("token", "t0k");
            HubClient admittedAnn = admitted(hub, ann.sign(first));
            ObjectNode version2 = bob.registration("p/bob", 2, System.currentTimeMillis() / 1000.0);
            version2.put("token", "t0k");
            admitted(hub, bob.sign(version2));
            admittedAnn.send(admittedAnn.frame("p/ann", "state_request")); // answered after the binding's own writes
            admittedAnn.awaitType("state_snapshot", WAIT);
            assertThat(hub.actor.committedPin("p/ann")).as("the bundle posture skips trust on first use").isEmpty();
            assertThat(hub.actor.committedPin("p/bob")).isEmpty();

            ObjectNode unsignedWithToken = unsigned("p/bob").put("token", "t0k");
            assertRefused(hub, unsignedWithToken, "missing_signature");
        }
    }

    @Test
    void aBundleFileIsReadStrictly() throws Exception {
        Path file = dir.resolve("trust.json");
        Files.writeString(file, "{\"identities\": {\"p/ann\": {\"key_id\": \"" + ann.keyId + "\", \"public_key\": \""
                + ann.publicKey + "\"}}}");
        IdentityTrust trust = IdentityTrust.load(file);
        assertThat(trust.size()).isEqualTo(1);
        assertThat(trust.keyOf("p/ann")).contains(new IdentityTrust.TrustedKey(ann.keyId, ann.publicKey));
        assertThat(trust.keyOf("p/bob")).isEmpty();

        String[][] bad = {
            {"[]", "expected {\"identities\""},
            {"{\"identities\": {}, \"extra\": 1}", "expected {\"identities\""},
            {"{\"identities\": {\"p/ann\": \"k\"}}", "is not an object"},
            {"{\"identities\": {\"p/ann\": {\"key_id\": \"\", \"public_key\": \"" + ann.publicKey + "\"}}}", "key_id"},
            {"{\"identities\": {\"p/ann\": {\"key_id\": \"k\", \"public_key\": \"abc\"}}}", "public_key"},
            {"{\"identities\": {\"p/ann\": {\"key_id\": \"k\", \"public_key\": \"" + ann.publicKey
                + "\", \"expires\": 1}}}", "unknown member 'expires'"},
            {"{\"identities\": {\" p/ann\": {\"key_id\": \"k\", \"public_key\": \"" + ann.publicKey + "\"}}}",
                "surrounding spaces"},
            {"not json", "cannot read it as JSON"},
        };
        for (String[] b : bad) {
            Files.writeString(file, b[0]);
            assertThatThrownBy(() -> IdentityTrust.load(file)).as(b[0]).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("--identity-trust").hasMessageContaining(b[1]);
        }
    }

    private static JsonNode reclaim(HubClient operator, String name, String pinName, String keyId) throws Exception {
        ObjectNode f = operator.frame(name, "identity_pin_reclaim");
        f.put("pin_name", pinName).put("expected_key_id", keyId).put("reason", "key lost");
        operator.send(f);
        return operator.awaitType("identity_pin_reclaim_result", WAIT);
    }

    @Test
    void inTheBundlePostureAnOperatorIsBoundByItsBundleKeyForReclaim() throws Exception {
        Path db = dir.resolve("hub.db");
        IdentityKey root = IdentityKey.generate();
        IdentityKey cat = IdentityKey.generate();
        PinReclaimAcl acl = new PinReclaimAcl(java.util.List.of(new PinReclaimAcl.Grant("p/*", "ops")));
        // trust on first use: p/cat is pinned; ops/root, unsigned, is not bound
        try (TestHub hub = new TestHub(HubConfig.builder().identityPins(new IdentityPinSettings(true, db.toString(), acl)),
                db, dev.synapsehub.core.state.CoordinationState::new)) {
            admitted(hub, cat.registration("p/cat")).close();
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (hub.actor.committedPin("p/cat").isEmpty()) {
                assertThat(System.nanoTime()).as("p/cat pinned").isLessThan(deadline);
                Thread.sleep(5);
            }
            HubClient op = admitted(hub, unsigned("ops/root"));
            assertThat(reclaim(op, "ops/root", "p/cat", cat.keyId).path("payload").asText())
                    .isEqualTo("the operator identity is not cryptographically bound");
        }
        IdentityTrust trust = new IdentityTrust(Map.of("ops/root", new IdentityTrust.TrustedKey(root.keyId, root.publicKey)));
        try (TestHub hub = new TestHub(HubConfig.builder()
                .identityPins(new IdentityPinSettings(true, db.toString(), acl, trust)), db,
                dev.synapsehub.core.state.CoordinationState::new)) {
            HubClient op = admitted(hub, root.registration("ops/root"));
            JsonNode done = reclaim(op, "ops/root", "p/cat", cat.keyId);
            assertThat(done.path("payload").asText()).isEqualTo("identity pin reclaimed; the next valid proof may pin the name");
            assertThat(done.path("applied").asBoolean()).isTrue();
            assertThat(done.path("audit_seq").asLong()).isPositive();
            assertThat(hub.actor.committedPin("p/cat")).isEmpty();
        }
        try (dev.synapsehub.journal.SqliteJournal j = dev.synapsehub.journal.SqliteJournal.open(db)) {
            var audits = j.readAfter(0, 100, java.util.Set.of("identity_pin_reclaim"));
            assertThat(audits).isNotEmpty().allSatisfy(e -> assertThat(
                    ((dev.synapsehub.core.event.IdentityPinReclaimEvent) e.event()).operatorKeyId())
                    .as("the audit names the bundle key").isEqualTo(root.keyId));
        }
    }
}
