package dev.synapsehub.net;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.core.identity.IdentityPin;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.net.identity.IdentityPinSettings;
import dev.synapsehub.net.identity.PinReclaimAcl;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;

import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Identity pinning over a real socket (contract A2, decisions A10.3 and A10.4): a valid
 * first-use proof pins the name, the same key is admitted again, every other proof and an
 * unsigned frame for a pinned name are refused with close 4013 and the contract's texts, a
 * broken first-use proof pins nothing, reserved names are never pinned, pins survive a restart
 * of a journaled hub, the reclaim verb checks in the contract's order and evicts with 4017, and
 * pinning is off unless {@code --identity-pinning}.
 */
class IdentityPinWireTest {

    /** What a refused first frame got: the private error, then the close. */
    private record Refusal(JsonNode error, HubClient.CloseStatus close) {
    }

    private static HubConfig.Builder pinning(String store, PinReclaimAcl acl) {
        return HubConfig.builder().identityPins(new IdentityPinSettings(true, store, acl));
    }

    private static TestHub pinningHub() throws InterruptedException {
        return new TestHub(pinning(null, PinReclaimAcl.NONE));
    }

    /** Sends {@code first} on a new socket and waits until its sender is bound (its own presence). */
    private static HubClient admitted(TestHub hub, ObjectNode first) throws Exception {
        HubClient c = hub.connect();
        String name = first.path("sender").asText().strip();
        c.send(first);
        c.awaitWhileOpen(f -> "presence_update".equals(f.path("type").asText()) && name.equals(f.path("agent").asText())
                && "joined".equals(f.path("event").asText()), WAIT);
        return c;
    }

    private static Refusal refused(TestHub hub, ObjectNode first) throws Exception {
        HubClient c = hub.connect();
        c.send(first);
        JsonNode error = c.await(f -> f.has("verification_result") || "name_conflict".equals(f.path("type").asText())
                || "auth_denied".equals(f.path("type").asText()), WAIT);
        return new Refusal(error, c.awaitClose(WAIT));
    }

    private static ObjectNode unsigned(String sender) {
        ObjectNode f = HubClient.requestFrame(sender, "heartbeat");
        f.put("payload", "online");
        return f;
    }

    /** Waits (bounded) until the writer committed the pin of {@code name}. */
    private static IdentityPin awaitPin(TestHub hub, String name) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (hub.actor.committedPin(name).isEmpty()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("'" + name + "' was not pinned within " + WAIT);
            }
            Thread.sleep(5);
        }
        return hub.actor.committedPin(name).orElseThrow();
    }

    private static String pinnedText(String name, String keyId, String result, String store) {
        return "identity pin: name '" + name + "' is pinned to key " + keyId + " (" + result + "). Connect from the "
                + "machine holding that key, or ask an identity-pin-reclaim ACL operator to run synapse identity "
                + "reclaim --operator=OPERATOR_IDENTITY --expected-key-id=" + keyId + " --reason=REASON -- " + name
                + " after inspecting " + store + "; the hub needs --db for the mandatory audit.";
    }

    private static void assertPinMismatch(Refusal r, String name, String keyId, String result, String store) {
        assertThat(r.error().path("type").asText()).isEqualTo("error");
        assertThat(r.error().path("target").asText()).isEqualTo(name);
        assertThat(r.error().path("verification_result").asText()).isEqualTo(result);
        assertThat(r.error().path("payload").asText()).isEqualTo(pinnedText(name, keyId, result, store));
        assertThat(r.close()).isEqualTo(new HubClient.CloseStatus(4013, "identity pin mismatch"));
    }

    private static void assertBindingFailed(Refusal r, String result) {
        assertThat(r.error().path("type").asText()).isEqualTo("error");
        assertThat(r.error().path("verification_result").asText()).isEqualTo(result);
        assertThat(r.error().path("payload").asText()).isEqualTo("identity signature invalid: " + result);
        assertThat(r.close()).isEqualTo(new HubClient.CloseStatus(4013, "identity binding failed"));
    }

    private static final String MEMORY = "the in-memory pin through the hub operator";

    @Test
    void aFirstValidProofPinsTheNameAndTheSameKeyIsAdmittedAgain() throws Exception {
        try (TestHub hub = pinningHub()) {
            IdentityKey ann = IdentityKey.generate();
            admitted(hub, ann.registration("p/ann")).close();
            IdentityPin pin = awaitPin(hub, "p/ann");
            assertThat(pin.keyId()).isEqualTo(ann.keyId);
            assertThat(pin.publicKey()).isEqualTo(ann.publicKey);
            HubClient again = admitted(hub, ann.registration("p/ann", 2, System.currentTimeMillis() / 1000.0));
            again.send(again.frame("p/ann", "who_request"));
            assertThat(again.awaitType("who_snapshot", WAIT).path("online_agents").toString()).contains("p/ann");

            // pins are per exact name: the sidecar is independent of its agent
            IdentityKey other = IdentityKey.generate();
            admitted(hub, other.registration("p/ann-rx"));
            assertThat(awaitPin(hub, "p/ann-rx").keyId()).isEqualTo(other.keyId);
        }
    }

    @Test
    void aSignedFirstChatPinsAndIsFannedOutWithItsProof() throws Exception {
        try (TestHub hub = pinningHub()) {
            HubClient bob = admitted(hub, unsigned("p/bob"));
            IdentityKey ann = IdentityKey.generate();
            ObjectNode chat = ann.registration("p/ann");
            chat.put("type", "chat");
            chat.put("target", "all");
            chat.put("payload", "hello");
            HubClient annSocket = hub.connect();
            annSocket.send(ann.sign(chat));
            JsonNode got = bob.await(f -> "chat".equals(f.path("type").asText())
                    && "p/ann".equals(f.path("sender").asText()), WAIT);
            assertThat(got.path("payload").asText()).isEqualTo("hello");
            assertThat(got.path("identity_public_key").asText()).isEqualTo(ann.publicKey);
            assertThat(got.path("signature").path("key_id").asText()).isEqualTo(ann.keyId);
            assertThat(awaitPin(hub, "p/ann").keyId()).isEqualTo(ann.keyId);
            // later frames are never checked
            annSocket.send(annSocket.frame("p/ann", "who_request"));
            assertThat(annSocket.awaitWhileOpen(f -> "who_snapshot".equals(f.path("type").asText()), WAIT)).isNotNull();
        }
    }

    @Test
    void aPinnedNameRefusesEveryOtherProofAndAnUnsignedFrame() throws Exception {
        try (TestHub hub = pinningHub()) {
            IdentityKey ann = IdentityKey.generate();
            admitted(hub, ann.registration("p/ann")).close();
            awaitPin(hub, "p/ann");
            // a nonce already accepted inside the window (signed_at at the edge of the future skew
            // keeps the resend inside the window on a slow machine)
            ObjectNode once = ann.registration("p/ann", 1, System.currentTimeMillis() / 1000.0 + 0.9);
            admitted(hub, once).close();
            assertPinMismatch(refused(hub, once), "p/ann", ann.keyId, "replayed", MEMORY);

            assertPinMismatch(refused(hub, unsigned("p/ann")), "p/ann", ann.keyId, "signature missing", MEMORY);
            IdentityKey mallory = IdentityKey.generate();
            assertPinMismatch(refused(hub, mallory.registration("p/ann")), "p/ann", ann.keyId, "unknown_key", MEMORY);
            // the pinned key id with another key (or a tampered frame) fails the signature check
            ObjectNode sameId = mallory.registration("p/ann");
            ((ObjectNode) sameId.get("signature")).put("key_id", ann.keyId);
            assertPinMismatch(refused(hub, mallory.sign(sameId)), "p/ann", ann.keyId, "bad_signature", MEMORY);
            ObjectNode tampered = ann.registration("p/ann");
            tampered.put("payload", "tampered after signing");
            assertPinMismatch(refused(hub, tampered), "p/ann", ann.keyId, "bad_signature", MEMORY);
            double stale = System.currentTimeMillis() / 1000.0 - 60;
            assertPinMismatch(refused(hub, ann.registration("p/ann", 1, stale)), "p/ann", ann.keyId, "expired", MEMORY);
            // the hub trims the sender, but the proof must name it byte for byte
            assertPinMismatch(refused(hub, ann.registration(" p/ann ")), "p/ann", ann.keyId, "sender_mismatch", MEMORY);
            // a correct-key takeover of a live holder works; an unsigned takeover gets 4013
            HubClient holder = admitted(hub, ann.registration("p/ann"));
            ObjectNode takeover = unsigned("p/ann");
            takeover.put("takeover", true);
            assertPinMismatch(refused(hub, takeover), "p/ann", ann.keyId, "signature missing", MEMORY);
            assertThat(holder.isOpen()).isTrue();
            ObjectNode signedTakeover = ann.registration("p/ann");
            signedTakeover.put("takeover", true);
            HubClient taker = hub.connect();
            taker.send(ann.sign(signedTakeover)); // a takeover joins nobody: no presence, the holder is superseded
            assertThat(holder.awaitClose(WAIT)).isEqualTo(new HubClient.CloseStatus(4010, "superseded"));
            taker.send(taker.frame("p/ann", "who_request"));
            assertThat(taker.awaitWhileOpen(f -> "who_snapshot".equals(f.path("type").asText()), WAIT)
                    .path("online_agents").toString()).contains("p/ann");
            assertThat(hub.actor.committedPin("p/ann")).map(IdentityPin::keyId).contains(ann.keyId);
        }
    }

    @Test
    void aBrokenFirstUseProofIsRefusedAndPinsNothing() throws Exception {
        try (TestHub hub = pinningHub()) {
            IdentityKey bob = IdentityKey.generate();
            ObjectNode tampered = bob.registration("p/bob");
            tampered.put("payload", "changed");
            assertBindingFailed(refused(hub, tampered), "bad_signature");
            ObjectNode v1WithDomain = bob.registration("p/bob");
            ((ObjectNode) v1WithDomain.get("signature")).put("domain", IdentityKey.DOMAIN);
            assertBindingFailed(refused(hub, bob.sign(v1WithDomain)), "invalid_domain");
            ObjectNode v2WithoutDomain = bob.registration("p/bob", 2, System.currentTimeMillis() / 1000.0);
            ((ObjectNode) v2WithoutDomain.get("signature")).remove("domain");
            assertBindingFailed(refused(hub, bob.sign(v2WithoutDomain)), "invalid_domain");
            ObjectNode zeroSequence = bob.registration("p/bob");
            ((ObjectNode) zeroSequence.get("signature")).put("sequence", 0);
            assertBindingFailed(refused(hub, bob.sign(zeroSequence)), "sequence_mismatch");
            ObjectNode boolVersion = bob.registration("p/bob");
            ((ObjectNode) boolVersion.get("signature")).put("version", true);
            assertBindingFailed(refused(hub, bob.sign(boolVersion)), "bad_signature");
            ObjectNode shortKey = bob.registration("p/bob");
            shortKey.put("identity_public_key", "AAAA");
            assertBindingFailed(refused(hub, bob.sign(shortKey)), "unknown_key");
            assertBindingFailed(refused(hub, bob.registration("p/bob", 1, System.currentTimeMillis() / 1000.0 + 30)),
                    "expired");
            assertThat(hub.actor.committedPin("p/bob")).isEmpty();

            // either member missing: admitted, nothing pinned (A2.3, last row)
            ObjectNode keyOnly = unsigned("p/bob");
            keyOnly.put("identity_public_key", bob.publicKey);
            admitted(hub, keyOnly).close();
            ObjectNode signatureOnly = bob.registration("p/carol");
            signatureOnly.remove("identity_public_key");
            admitted(hub, signatureOnly).close();
            assertThat(hub.actor.committedPin("p/bob")).isEmpty();
            assertThat(hub.actor.committedPin("p/carol")).isEmpty();
        }
    }

    @Test
    void theReservedHubIdentityIsRefused4009AndNeverPinned() throws Exception {
        try (TestHub hub = pinningHub()) {
            IdentityKey key = IdentityKey.generate();
            for (String reserved : List.of("SynapseHub", "synapse", "SYSTEM")) {
                Refusal r = refused(hub, key.registration(reserved));
                assertThat(r.error().path("type").asText()).isEqualTo("name_conflict");
                assertThat(r.error().path("payload").asText()).isEqualTo("Name '" + reserved
                        + "' is reserved for hub protocol provenance. Choose a non-reserved agent name.");
                assertThat(r.close()).isEqualTo(new HubClient.CloseStatus(4009, "reserved identity"));
                assertThat(hub.actor.committedPin(reserved)).isEmpty();
            }
        }
    }

    @Test
    void aSignedFrameForANameHeldLiveIsRefusedAndPinsNothing() throws Exception {
        try (TestHub hub = pinningHub()) {
            HubClient holder = admitted(hub, unsigned("p/dan"));
            IdentityKey intruder = IdentityKey.generate();
            Refusal r = refused(hub, intruder.registration("p/dan"));
            assertThat(r.error().path("type").asText()).isEqualTo("name_conflict");
            assertThat(r.close()).isEqualTo(new HubClient.CloseStatus(4009, "name conflict"));
            // decision A10.3: a key is pinned only after the name binding succeeded
            assertThat(hub.actor.committedPin("p/dan")).isEmpty();
            holder.close();
            assertThat(holder.awaitClose(WAIT)).isNotNull();
            admitted(hub, unsigned("p/dan"));
        }
    }

    @Test
    void theTokenCheckComesBeforeThePin() throws Exception {
        try (TestHub hub = new TestHub(pinning(null, PinReclaimAcl.NONE).token("s3cret"))) {
            IdentityKey ann = IdentityKey.generate();
            ObjectNode first = ann.registration("p/ann");
            first.put("token", "s3cret");
            admitted(hub, ann.sign(first)).close();
            awaitPin(hub, "p/ann");
            ObjectNode wrongToken = ann.registration("p/ann");
            wrongToken.put("token", "wrong");
            Refusal r = refused(hub, ann.sign(wrongToken));
            assertThat(r.error().path("type").asText()).isEqualTo("auth_denied");
            assertThat(r.close()).isEqualTo(new HubClient.CloseStatus(4010, "auth denied"));
            ObjectNode unsignedWithToken = unsigned("p/ann");
            unsignedWithToken.put("token", "s3cret");
            assertPinMismatch(refused(hub, unsignedWithToken), "p/ann", ann.keyId, "signature missing", MEMORY);
        }
    }

    @Test
    void pinningIsOffByDefault() throws Exception {
        try (TestHub hub = TestHub.open()) {
            assertThat(hub.server.config().identityPins().enabled()).isFalse();
            IdentityKey ann = IdentityKey.generate();
            admitted(hub, ann.registration("p/ann")).close();
            admitted(hub, IdentityKey.generate().registration("p/ann")).close();
            HubClient unsignedAnn = admitted(hub, unsigned("p/ann"));
            assertThat(unsignedAnn.isOpen()).isTrue();
            assertThat(hub.actor.committedPin("p/ann")).isEmpty();
        }
    }

    @Test
    void pinsSurviveARestartOfAJournaledHub(@TempDir Path dir) throws Exception {
        Path db = dir.resolve("hub.db");
        IdentityKey ann = IdentityKey.generate();
        try (TestHub hub = new TestHub(pinning(db.toString(), PinReclaimAcl.NONE), db, CoordinationState::new)) {
            admitted(hub, ann.registration("p/ann")).close();
            awaitPin(hub, "p/ann");
        }
        try (TestHub hub = new TestHub(pinning(db.toString(), PinReclaimAcl.NONE), db, CoordinationState::new)) {
            assertThat(hub.actor.committedPin("p/ann")).map(IdentityPin::publicKey).contains(ann.publicKey);
            assertPinMismatch(refused(hub, IdentityKey.generate().registration("p/ann")), "p/ann", ann.keyId,
                    "unknown_key", db.toString());
            admitted(hub, ann.registration("p/ann"));
        }
    }

    /** An agent's connection and the name it bound. */
    private record Agent(HubClient client, String name) {
    }

    private static Agent agent(TestHub hub, ObjectNode first) throws Exception {
        return new Agent(admitted(hub, first), first.path("sender").asText());
    }

    private static JsonNode reclaim(Agent operator, String pinName, String keyId, String reason, Object breakGlass)
            throws Exception {
        ObjectNode f = operator.client().frame(operator.name(), "identity_pin_reclaim");
        if (pinName != null) {
            f.put("pin_name", pinName);
        }
        if (keyId != null) {
            f.put("expected_key_id", keyId);
        }
        if (reason != null) {
            f.put("reason", reason);
        }
        if (breakGlass instanceof Boolean b) {
            f.put("break_glass", b);
        } else if (breakGlass != null) {
            f.put("break_glass", breakGlass.toString());
        }
        operator.client().send(f);
        return operator.client().awaitType("identity_pin_reclaim_result", WAIT);
    }

    /** Waits (bounded) until {@code name} is no longer bound on the hub. */
    private static void awaitOffline(TestHub hub, String name) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (hub.server.services().registry().isOnline(name)) {
            assertThat(System.nanoTime()).as(name + " still online").isLessThan(deadline);
            Thread.sleep(5);
        }
    }

    /** A journaled hub pinning identities, where operators of project {@code ops} may reclaim {@code p/*}. */
    private static TestHub reclaimHub(Path dir) throws Exception {
        Path db = dir.resolve("hub.db");
        PinReclaimAcl acl = new PinReclaimAcl(List.of(new PinReclaimAcl.Grant("p/*", "ops")));
        return new TestHub(pinning(db.toString(), acl), db, CoordinationState::new);
    }

    /** {@code name} registered with {@code key} asking for an ownership lease, once granted and pinned. */
    private static HubClient leasedAndPinned(TestHub hub, IdentityKey key, String name) throws Exception {
        ObjectNode leased = key.registration(name);
        leased.put("lease", true);
        HubClient c = admitted(hub, key.sign(leased));
        c.awaitType("lease_granted", WAIT);
        awaitPin(hub, name);
        return c;
    }

    /** An agent registered as {@code name} with a fresh key, once its pin committed. */
    private static Agent pinnedAgent(TestHub hub, String name) throws Exception {
        Agent a = agent(hub, IdentityKey.generate().registration(name));
        awaitPin(hub, name);
        return a;
    }

    private static void assertRefusedReclaim(JsonNode r, String payload) {
        assertThat(r.path("payload").asText()).isEqualTo(payload);
        assertThat(r.path("applied").asBoolean()).isFalse();
        assertThat(r.path("audit_seq").isNull()).isTrue();
    }

    @Test
    void reclaimChecksInTheContractsOrderThenEvictsAndUnpins(@TempDir Path dir) throws Exception {
        try (TestHub hub = reclaimHub(dir)) {
            IdentityKey rootKey = IdentityKey.generate();
            IdentityKey annKey = IdentityKey.generate();
            Agent root = agent(hub, rootKey.registration("ops/root"));
            awaitPin(hub, "ops/root");
            HubClient ann = admitted(hub, annKey.registration("p/ann"));
            awaitPin(hub, "p/ann");
            Agent outsider = agent(hub, unsigned("dev/eve"));
            Agent unbound = agent(hub, unsigned("ops/bob"));

            assertRefusedReclaim(reclaim(root, " ", annKey.keyId, "r", null), "pin name is required");
            assertRefusedReclaim(reclaim(root, "p/ann", null, "r", null), "expected key id is required");
            assertRefusedReclaim(reclaim(root, "p/ann", annKey.keyId, "  ", null),
                    "a non-empty operator reason is required");
            assertRefusedReclaim(reclaim(root, "p/ann", annKey.keyId, "x".repeat(501), null),
                    "operator reason exceeds 500 characters");
            assertRefusedReclaim(reclaim(root, "ops/root", rootKey.keyId, "r", null),
                    "an operator cannot reclaim the identity used by its own live connection");
            assertRefusedReclaim(reclaim(outsider, "p/ann", annKey.keyId, "r", null),
                    "no identity-pin-reclaim ACL grant authorises this operator and target");
            assertRefusedReclaim(reclaim(root, "q/ann", annKey.keyId, "r", null),
                    "no identity-pin-reclaim ACL grant authorises this operator and target");
            assertRefusedReclaim(reclaim(unbound, "p/ann", annKey.keyId, "r", null),
                    "the operator identity is not cryptographically bound");
            assertRefusedReclaim(reclaim(root, "p/nobody", "k", "r", null), "the target has no identity pin");
            assertRefusedReclaim(reclaim(root, "p/ann", "machine-wrong", "r", null),
                    "the current pin does not match the expected key id");
            assertRefusedReclaim(reclaim(root, "p/ann", annKey.keyId, "r", "true"),
                    "the pinned identity is online; use explicit break-glass recovery to evict it");
            assertThat(hub.actor.committedPin("p/ann")).isPresent();

            JsonNode done = reclaim(root, " p/ann ", " " + annKey.keyId + " ", "laptop lost", true);
            assertThat(done.path("payload").asText())
                    .isEqualTo("identity pin reclaimed; the next valid proof may pin the name");
            assertThat(done.path("applied").asBoolean()).isTrue();
            assertThat(done.path("break_glass").asBoolean()).isTrue();
            assertThat(done.path("pin_name").asText()).isEqualTo("p/ann");
            assertThat(done.path("expected_key_id").asText()).isEqualTo(annKey.keyId);
            assertThat(done.path("audit_seq").isIntegralNumber()).isTrue();
            assertThat(ann.awaitClose(WAIT)).isEqualTo(new HubClient.CloseStatus(4017, "identity pin reclaimed"));
            JsonNode notice = outsider.client().awaitType("system", WAIT);
            assertThat(notice.path("payload").asText())
                    .isEqualTo("Identity pin for 'p/ann' was reclaimed by operator 'ops/root'.");
            assertThat(notice.path("event_kind").asText()).isEqualTo("identity_pin_reclaim");
            assertThat(notice.path("operator").asText()).isEqualTo("ops/root");
            assertThat(notice.path("pin_name").asText()).isEqualTo("p/ann");
            assertThat(notice.path("previous_key_id").asText()).isEqualTo(annKey.keyId);
            assertThat(notice.path("break_glass").asBoolean()).isTrue();
            assertThat(notice.path("audit_seq").asLong()).isEqualTo(done.path("audit_seq").asLong());
            assertThat(hub.actor.committedPin("p/ann")).isEmpty();

            // the next valid proof, by any key, pins the name again
            IdentityKey newKey = IdentityKey.generate();
            admitted(hub, newKey.registration("p/ann"));
            assertThat(awaitPin(hub, "p/ann").keyId()).isEqualTo(newKey.keyId);

            // an offline holder whose ownership lease is still live: check 12, waived by break-glass
            IdentityKey catKey = IdentityKey.generate();
            HubClient cat = leasedAndPinned(hub, catKey, "p/cat");
            cat.close();
            awaitOffline(hub, "p/cat");
            assertRefusedReclaim(reclaim(root, "p/cat", catKey.keyId, "r", false),
                    "the ownership lease is still live; wait for its offline TTL or use break-glass");
            JsonNode glass = reclaim(root, "p/cat", catKey.keyId, "r", true);
            assertThat(glass.path("applied").asBoolean()).isTrue();
            assertThat(glass.path("audit_seq").asLong()).isGreaterThan(done.path("audit_seq").asLong());
            assertThat(hub.actor.committedPin("p/cat")).isEmpty();
            // the lease went with the pin: the next valid proof binds without its owner_lease and pins
            IdentityKey catNew = IdentityKey.generate();
            admitted(hub, catNew.registration("p/cat"));
            assertThat(awaitPin(hub, "p/cat").keyId()).isEqualTo(catNew.keyId);
        }
    }

    @Test
    void aReclaimEndsTheNamesOwnershipLeaseAlsoForAnEvictedLiveHolder(@TempDir Path dir) throws Exception {
        try (TestHub hub = reclaimHub(dir)) {
            Agent root = pinnedAgent(hub, "ops/root");
            IdentityKey danKey = IdentityKey.generate();
            HubClient dan = leasedAndPinned(hub, danKey, "p/dan");

            JsonNode done = reclaim(root, "p/dan", danKey.keyId, "laptop stolen", true);
            assertThat(done.path("applied").asBoolean()).as(done.toString()).isTrue();
            assertThat(dan.awaitClose(WAIT)).isEqualTo(new HubClient.CloseStatus(4017, "identity pin reclaimed"));
            awaitOffline(hub, "p/dan");
            // evicted after the reclaim, the holder left no offline lease behind (3600 s by default)
            assertThat(hub.server.services().registry().leaseLive("p/dan", System.currentTimeMillis() / 1000.0))
                    .isFalse();
            IdentityKey newKey = IdentityKey.generate();
            admitted(hub, newKey.registration("p/dan"));
            assertThat(awaitPin(hub, "p/dan").keyId()).isEqualTo(newKey.keyId);
        }
    }

    @Test
    void reclaimNeedsAJournal() throws Exception {
        PinReclaimAcl acl = new PinReclaimAcl(List.of(new PinReclaimAcl.Grant("*", null)));
        try (TestHub hub = new TestHub(pinning(null, acl))) {
            IdentityKey rootKey = IdentityKey.generate();
            Agent root = agent(hub, rootKey.registration("ops/root"));
            awaitPin(hub, "ops/root");
            admitted(hub, IdentityKey.generate().registration("p/ann")).close();
            awaitPin(hub, "p/ann");
            assertRefusedReclaim(reclaim(root, "p/ann", "k", "r", null),
                    "the hub has no durable journal for the mandatory reclaim audit event");
        }
    }

    /** The edge clock, moved by the test. */
    private static final class ManualClock implements dev.synapsehub.core.Clock {
        private volatile double now = System.currentTimeMillis() / 1000.0;

        @Override
        public double nowSeconds() {
            return now;
        }
    }

    private static void awaitOnline(TestHub hub, String name) {
        assertThat(hub.server.services().registry().isOnline(name)).as(name + " online").isTrue();
    }

    @Test
    void theStaleOwnerWaiverNeedsAQuietHolderWithoutALiveWaiter() throws Exception {
        staleOwnerWaiver(HubConfig.DEFAULT_RECIPIENT_LIVENESS_WINDOW, HubConfig.DEFAULT_WAITER_LIVENESS_WINDOW);
    }

    @Test
    void theStaleOwnerWaiverCountsTheConfiguredLivenessWindows() throws Exception {
        staleOwnerWaiver(10.0, 2.0); // both crossed far inside the 90 s and 20 s defaults
    }

    private void staleOwnerWaiver(double reactionWindow, double waiterWindow) throws Exception {
        ManualClock clock = new ManualClock();
        dev.synapsehub.core.journal.InMemoryJournal journal = new dev.synapsehub.core.journal.InMemoryJournal();
        dev.synapsehub.core.actor.CoordinationActor actor = new dev.synapsehub.core.actor.CoordinationActor(
                new CoordinationState(), journal, clock, dev.synapsehub.core.actor.ActorSettings.DEFAULTS);
        actor.start();
        PinReclaimAcl acl = new PinReclaimAcl(List.of(new PinReclaimAcl.Grant("p/*", "ops")));
        double ttl = 5.0;
        try (TestHub hub = new TestHub(pinning(null, acl).leaseOfflineTtlSeconds(ttl)
                .recipientLivenessWindowSeconds(reactionWindow).waiterLivenessWindowSeconds(waiterWindow),
                actor, clock, journal)) {
            IdentityKey rootKey = IdentityKey.generate();
            IdentityKey annKey = IdentityKey.generate();
            Agent root = agent(hub, rootKey.registration("ops/root", 1, clock.now));
            awaitPin(hub, "ops/root");
            HubClient ann = admitted(hub, annKey.registration("p/ann", 1, clock.now));
            awaitPin(hub, "p/ann");
            Agent waiter = agent(hub, unsigned("p/ann-rx"));

            // past the reaction window and the offline TTL, the holder only heartbeats (no reaction),
            // but its -rx waiter was seen just now: the holder is not stale
            clock.now += reactionWindow + ttl + 1; // the reaction window and the offline TTL
            ann.send(unsigned("p/ann"));
            waiter.client().send(unsigned("p/ann-rx"));
            root.client().send(root.client().frame("ops/root", "who_request"));
            root.client().awaitType("who_snapshot", WAIT); // the heartbeats before it were handled
            awaitOnline(hub, "p/ann");
            assertRefusedReclaim(reclaim(root, "p/ann", annKey.keyId, "r", false),
                    "the pinned identity is online; use explicit break-glass recovery to evict it");
            assertThat(hub.actor.committedPin("p/ann")).isPresent();

            // the waiter falls silent past its window: now the quiet holder is waived
            clock.now += waiterWindow + 1;
            ann.send(unsigned("p/ann"));
            root.client().send(root.client().frame("ops/root", "who_request"));
            root.client().awaitType("who_snapshot", WAIT);
            awaitOnline(hub, "p/ann");
            awaitOnline(hub, "p/ann-rx");
            JsonNode done = reclaim(root, "p/ann", annKey.keyId, "holder unreachable", false);
            assertThat(done.path("applied").asBoolean()).as(done.toString()).isTrue();
            assertThat(done.path("break_glass").asBoolean()).isFalse();
            assertThat(ann.awaitClose(WAIT)).isEqualTo(new HubClient.CloseStatus(4017, "identity pin reclaimed"));
            assertThat(hub.actor.committedPin("p/ann")).isEmpty();
        }
    }

    /**
     * A pinned key id is kept forever (A2.5): one longer than {@code MAX_KEY_ID_CHARACTERS} is a
     * broken first-use proof ({@code unknown_key}, A2.2/A2.4) and pins nothing; 256 still pins.
     */
    @Test
    void anOversizeKeyIdIsABrokenProofAndPinsNothing() throws Exception {
        try (TestHub hub = pinningHub()) {
            IdentityKey key = IdentityKey.generate();
            ObjectNode big = key.registration("p/big");
            ((ObjectNode) big.get("signature")).put("key_id", "k".repeat(512 * 1024));
            assertBindingFailed(refused(hub, key.sign(big)), "unknown_key");
            ObjectNode astral = key.registration("p/big");
            ((ObjectNode) astral.get("signature")).put("key_id", "\uD83D\uDE00".repeat(257));
            assertBindingFailed(refused(hub, key.sign(astral)), "unknown_key");
            assertThat(hub.actor.committedPin("p/big")).isEmpty();

            ObjectNode longest = key.registration("p/big");
            String keyId = "\uD83D\uDE00".repeat(dev.synapsehub.net.identity.IdentityProof.MAX_KEY_ID_CHARACTERS);
            ((ObjectNode) longest.get("signature")).put("key_id", keyId);
            admitted(hub, key.sign(longest));
            assertThat(awaitPin(hub, "p/big").keyId()).isEqualTo(keyId);
        }
    }

    /**
     * A full pin store (pins never expire, A2.5) admits a valid first-use proof without a pin, as a
     * frame without a proof is admitted (A2.3): refusing would let 65,536 names lock out every new
     * signed agent. Each such admission is counted.
     */
    @Test
    void aFullPinStoreAdmitsAValidFirstUseProofUnpinnedAndCountsIt() throws Exception {
        CoordinationState state = new CoordinationState();
        for (int i = 0; i < dev.synapsehub.core.identity.IdentityPinRegistry.MAX_PINS; i++) {
            state.pins().apply(new dev.synapsehub.core.event.IdentityPinEvent(1.0,
                    dev.synapsehub.core.event.IdentityPinEvent.Op.PIN, "n" + i, "kid", "pk"));
        }
        dev.synapsehub.core.actor.CoordinationActor actor = new dev.synapsehub.core.actor.CoordinationActor(state,
                new dev.synapsehub.core.journal.InMemoryJournal(), dev.synapsehub.core.Clock.system(),
                dev.synapsehub.core.actor.ActorSettings.DEFAULTS);
        actor.start();
        try (TestHub hub = new TestHub(pinning(null, PinReclaimAcl.NONE), actor, dev.synapsehub.core.Clock.system())) {
            var metrics = hub.server.services().metrics();
            for (String name : List.of("p/ann", "p/bob")) {
                IdentityKey key = IdentityKey.generate();
                admitted(hub, key.registration(name));
                long deadline = System.nanoTime() + WAIT.toNanos();
                while (metrics.pinsStoreFull.get() < (name.equals("p/ann") ? 1 : 2) && System.nanoTime() < deadline) {
                    Thread.sleep(5); // the pin is decided after the binding, off the socket's path
                }
                assertThat(hub.actor.committedPin(name)).isEmpty();
            }
            assertThat(metrics.pinsStoreFull.get()).isEqualTo(2);
            assertThat(metrics.faults.get()).as("a full store is no fault").isZero();
        }
    }

    /** A2.6 check 3: a reason of Python whitespace only (U+00A0, U+2007, U+202F) is no reason. */
    @Test
    void aReasonOfNoBreakSpacesIsNotAnOperatorReason(@TempDir Path dir) throws Exception {
        try (TestHub hub = reclaimHub(dir)) {
            IdentityKey rootKey = IdentityKey.generate();
            IdentityKey annKey = IdentityKey.generate();
            Agent root = agent(hub, rootKey.registration("ops/root"));
            awaitPin(hub, "ops/root");
            admitted(hub, annKey.registration("p/ann"));
            awaitPin(hub, "p/ann");
            JsonNode r = reclaim(root, "p/ann", annKey.keyId, "\u00A0\u2007\u202F", true);
            assertThat(r.path("payload").asText()).isEqualTo("a non-empty operator reason is required");
            assertThat(r.path("applied").asBoolean()).isFalse();
            assertThat(hub.actor.committedPin("p/ann")).isPresent();
        }
    }

    /**
     * INV-CK-2 after a host suspend: the wall clock moved 10 minutes, the monotonic clock did not,
     * so hub time lags the wall clock and slews back at 1 % (about 16 h). The pinned agent signs
     * with its wall clock and must be admitted at once, not refused {@code expired}.
     */
    @Test
    void aPinnedAgentIsAdmittedRightAfterTheHostWakesFromASuspend() throws Exception {
        java.util.concurrent.atomic.AtomicLong suspended = new java.util.concurrent.atomic.AtomicLong();
        dev.synapsehub.core.SteadyClock clock = new dev.synapsehub.core.SteadyClock(
                () -> System.currentTimeMillis() + suspended.get(), System::nanoTime, m -> { });
        try (TestHub hub = new TestHub(pinning(null, PinReclaimAcl.NONE), clock)) {
            IdentityKey key = IdentityKey.generate();
            admitted(hub, key.registration("p/sleeper", 1, clock.wallSeconds())).close();
            awaitPin(hub, "p/sleeper");
            suspended.set(600_000);
            assertThat(clock.wallSeconds() - clock.nowSeconds()).as("hub time lags the wall clock").isGreaterThan(500);
            HubClient back = admitted(hub, key.registration("p/sleeper", 1, clock.wallSeconds()));
            back.close();
        }
    }

    /**
     * Review F7b: a role equal to a pinned agent's name would receive that agent's directed chats
     * whenever it is offline; it is refused (ours: the contract is silent), the other roles kept.
     */
    @Test
    void aRoleNamedAfterAPinnedAgentIsRefused() throws Exception {
        try (TestHub hub = pinningHub()) {
            IdentityKey key = IdentityKey.generate();
            admitted(hub, key.registration("p/alice")).close();
            awaitPin(hub, "p/alice");
            HubClient sidecar = admitted(hub, unsigned("p/alice-rx"));
            assertThat(sidecar.isOpen()).as("pins are per exact name (A2.5)").isTrue();
            HubClient mallory = hub.connect();
            ObjectNode reg = unsigned("q/mallory");
            reg.putArray("roles").add("p/alice").add("p/alice-rx").add("q/reviewer");
            mallory.send(reg);
            assertThat(mallory.awaitType("error", WAIT).path("payload").asText()).isEqualTo("Roles refused:"
                    + " 'p/alice' (a pinned agent name), 'p/alice-rx' (the name of a connected agent). A role is an"
                    + " address of its own, never another agent's name; the other roles apply.");
        }
    }
}
