package dev.synapsehub.net;

import dev.synapsehub.client.HubClient;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.net.auth.MessageAuthenticator;
import dev.synapsehub.net.auth.SigningTime;
import dev.synapsehub.net.wire.WireJson;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Set;

import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/** Contract §5.4–5.9, §5.17, §5.18, §4.6 and §9 over a real loopback WebSocket. */
class ClaimVerbsTest {

    private static ObjectNode claim(HubClient c, String task, String path) {
        ObjectNode f = c.frame("claim");
        f.put("task_id", task).put("worktree", "wt").put("ttl_seconds", 60.0);
        f.putArray("paths").add(path);
        return f;
    }

    @Test
    void releaseTaskUpdateCheckpointAndTheirDenials() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient a = hub.agent("p/a");
            HubClient b = hub.agent("p/b");
            a.send(claim(a, "T1", "src/a.py"));
            long epoch = a.awaitType("claim_granted", WAIT).path("epoch").asLong();

            ObjectNode upd = a.frame("task_update");
            upd.put("task_id", "T1").put("status", "working").put("note", "busy").put("expected_version", 0);
            a.send(upd);
            ObjectNode updated = b.awaitType("task_updated", WAIT);
            assertThat(updated.path("version").asInt()).isEqualTo(1);
            assertThat(updated.path("status").asText()).isEqualTo("working");
            assertThat(updated.has("note")).isFalse();
            assertThat(updated.has("epoch")).isFalse();

            ObjectNode foreign = b.frame("task_update");
            foreign.put("task_id", "T1").put("status", "done");
            b.send(foreign);
            ObjectNode err = b.awaitType("error", WAIT);
            assertThat(err.has("task_id")).isFalse();

            ObjectNode cp = a.frame("checkpoint");
            cp.put("task_id", "T1").put("checkpoint", "step=2").put("epoch", epoch);
            a.send(cp);
            ObjectNode saved = a.awaitType("checkpoint_saved", WAIT);
            assertThat(saved.path("version").asInt()).isEqualTo(2);
            assertThat(saved.path("target").asText()).isEqualTo("p/a");
            ObjectNode cpb = b.frame("checkpoint");
            cpb.put("task_id", "T1").put("checkpoint", "evil");
            b.send(cpb);
            assertThat(b.awaitType("checkpoint_denied", WAIT).path("task_id").asText()).isEqualTo("T1");

            ObjectNode stale = a.frame("release");
            stale.put("task_id", "T1").put("epoch", epoch + 100);
            a.send(stale);
            assertThat(a.awaitType("release_denied", WAIT).path("task_id").asText()).isEqualTo("T1");

            ObjectNode rel = a.frame("release");
            rel.put("task_id", "T1");
            rel.putArray("evidence").add("tests pass");
            rel.put("freshness_seconds", "12");
            a.send(rel);
            ObjectNode released = b.awaitType("release_granted", WAIT);
            ObjectNode receipt = (ObjectNode) released.path("receipt");
            assertThat(receipt.path("released").asBoolean()).isTrue();
            assertThat(receipt.path("epistemic_status").asText()).isEqualTo("unverified");
            assertThat(receipt.path("freshness_seconds").asDouble()).isEqualTo(12.0);
            ObjectNode note = b.awaitType("ledger_progress_posted", WAIT);
            assertThat(note.path("note").path("kind").asText()).isEqualTo("assessment");

            ObjectNode again = a.frame("release");
            again.put("task_id", "T1");
            a.send(again);
            a.awaitType("release_denied", WAIT);
            Thread.sleep(200);
            assertThat(b.pending()).noneMatch(f -> f.path("type").asText().startsWith("release"));
        }
    }

    @Test
    void handoffChecksRecipientOnlineFirstThenMovesTheClaim() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient a = hub.agent("p/a");
            HubClient b = hub.agent("p/b");
            a.send(claim(a, "T3", "src/h.py"));
            long epoch = a.awaitType("claim_granted", WAIT).path("epoch").asLong();

            ObjectNode offline = a.frame("handoff");
            offline.put("task_id", "T3").put("to_agent", "p/nobody");
            a.send(offline);
            assertThat(a.awaitType("handoff_denied", WAIT).path("task_id").asText()).isEqualTo("T3");

            ObjectNode h = a.frame("handoff");
            h.put("task_id", "T3").put("to_agent", "p/b").put("note", "your turn");
            a.send(h);
            ObjectNode progress = b.await(f -> true, WAIT);
            while (progress.path("type").asText().equals("presence_update")
                    || progress.path("type").asText().equals("claim_granted")) {
                progress = b.await(f -> true, WAIT);
            }
            assertThat(progress.path("type").asText()).isEqualTo("ledger_progress_posted");
            assertThat(progress.path("note").path("text").asText()).isEqualTo("handed off to p/b: your turn");
            ObjectNode moved = b.awaitType("handoff_granted", WAIT);
            assertThat(moved.path("owner").asText()).isEqualTo("p/b");
            assertThat(moved.path("previous_owner").asText()).isEqualTo("p/a");
            assertThat(moved.path("version").asInt()).isZero();
            assertThat(moved.path("epoch").asLong()).isGreaterThan(epoch);
            assertThat(moved.has("git")).isFalse();

            ObjectNode rel = a.frame("release");
            rel.put("task_id", "T3");
            a.send(rel);
            a.awaitType("release_denied", WAIT);
            ObjectNode state = TestHub.state(b);
            assertThat(state.path("snapshot").path("active_claims").get(0).path("owner").asText()).isEqualTo("p/b");
        }
    }

    @Test
    void waitRequestGrantsDeniesAndDetectsCycles() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient a = hub.agent("p/a");
            HubClient b = hub.agent("p/b");
            a.send(claim(a, "TA", "a.py"));
            a.awaitType("claim_granted", WAIT);
            b.send(claim(b, "TB", "b.py"));
            b.awaitType("claim_granted", WAIT);
            ObjectNode w = b.frame("wait_request");
            w.put("task_id", "TA");
            b.send(w);
            ObjectNode granted = b.awaitType("wait_granted", WAIT);
            assertThat(granted.path("holder").asText()).isEqualTo("p/a");
            ObjectNode cycle = a.frame("wait_request");
            cycle.put("task_id", "TB");
            a.send(cycle);
            ObjectNode denied = a.awaitType("wait_denied", WAIT);
            assertThat(denied.path("holder").asText()).isEqualTo("p/b");
            ObjectNode none = a.frame("wait_request");
            none.put("task_id", "nope");
            a.send(none);
            assertThat(a.awaitType("wait_denied", WAIT).has("holder")).isFalse();
        }
    }

    @Test
    void whoAndStateSnapshotsHaveTheContractShape() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient a = hub.connect();
            ObjectNode hb = a.frame("p/a", "heartbeat");
            hb.put("wake_capability", "Direct");
            // Python's str.strip: no-break spaces trim too (a duplicate then), and a role of them alone is blank
            hb.putArray("roles").add("p/reviewer").add(" ").add(7).add("\u00a0p/reviewer\u2007").add("\u00a0");
            a.send(hb);
            a.awaitType("presence_update", WAIT);
            a.send(a.frame("p/a", "who_request"));
            ObjectNode who = a.awaitType("who_snapshot", WAIT);
            assertThat(who.path("mailbox_pending").isNull()).isTrue();
            assertThat(who.path("agent_roles").toString()).isEqualTo("{\"p/a\":[\"p/reviewer\"]}");
            assertThat(who.path("wake_capabilities").toString()).isEqualTo("{\"p/a\":\"direct\"}");
            assertThat(who.path("agent_liveness").path("p/a").path("proven_live").asBoolean()).isTrue();
            assertThat(who.path("connected_clients").asInt()).isEqualTo(1);
            a.send(a.frame("p/a", "state_request"));
            ObjectNode state = a.awaitType("state_snapshot", WAIT);
            assertThat(state.path("snapshot").fieldNames()).toIterable().containsExactly("active_claims", "agents",
                    "resources", "generated_at", "dead_letters", "pending_relay_approvals");
        }
    }

    @Test
    void idempotentRetriesReplayPrivatelyAndConflictsAreTyped() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient a = hub.agent("p/a");
            HubClient b = hub.agent("p/b");
            ObjectNode first = claim(a, "TI", "i.py");
            first.put("idem_key", "k-1");
            a.send(first);
            String original = a.awaitType("claim_granted", WAIT).toString();
            b.awaitType("claim_granted", WAIT);
            ObjectNode retry = first.deepCopy();
            retry.put("timestamp", 12345.0);
            a.send(retry);
            assertThat(a.awaitType("claim_granted", WAIT).toString()).isEqualTo(original);
            ObjectNode changed = first.deepCopy();
            changed.put("note", "different");
            a.send(changed);
            ObjectNode conflict = a.awaitType("error", WAIT);
            assertThat(conflict.path("error_code").asText()).isEqualTo("idempotency_conflict");
            TestHub.assertQuiet(b);
            ObjectNode badKey = claim(a, "TJ", "j.py");
            badKey.put("idem_key", 5);
            a.send(badKey);
            assertThat(a.awaitType("error", WAIT).path("error_code").asText()).isEqualTo("invalid_idempotency_request");
        }
    }

    @Test
    void guardsOfTheWrongTypeAndMalformedPathsAreRefusedAndChangeNothing() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient a = hub.agent("p/a");
            a.send(claim(a, "TG", "g.py"));
            a.awaitType("claim_granted", WAIT);
            String before = TestHub.state(a).path("snapshot").path("active_claims").toString();
            for (Object bad : List.of("1", true, 1.5)) {
                for (String verb : List.of("release", "task_update", "checkpoint")) {
                    ObjectNode f = a.frame(verb);
                    f.put("task_id", "TG");
                    f.put("status", "working");
                    if (bad instanceof String s) {
                        f.put("epoch", s);
                    } else if (bad instanceof Boolean bo) {
                        f.put("epoch", bo);
                    } else {
                        f.put("epoch", (Double) bad);
                    }
                    a.send(f);
                    ObjectNode e = a.awaitType("error", WAIT);
                    assertThat(e.path("error_code").asText()).isEqualTo("invalid_guard");
                }
            }
            ObjectNode ev = a.frame("task_update");
            ev.put("task_id", "TG").put("expected_version", "0").put("status", "working");
            a.send(ev);
            assertThat(a.awaitType("error", WAIT).path("field").asText()).isEqualTo("expected_version");
            ObjectNode paths = a.frame("claim");
            paths.put("task_id", "TP").put("paths", "src");
            a.send(paths);
            assertThat(a.awaitType("error", WAIT).path("error_code").asText()).isEqualTo("malformed_request");
            ObjectNode ttl = claim(a, "TG", "g.py");
            ttl.put("ttl_seconds", "5");
            a.send(ttl);
            ObjectNode renewed = a.awaitType("claim_granted", WAIT);
            assertThat(renewed.path("lease_expires_at").asDouble() - renewed.path("timestamp").asDouble())
                    .isBetween(25.0, 31.0);
            assertThat(before).contains("\"version\":0");
        }
    }

    @Test
    void perMessageHmacIsEnforcedForTheClaimFamily() throws Exception {
        MessageAuthKey key = MessageAuthKey.parse("k1:s3cret:p/a");
        try (TestHub hub = new TestHub(HubConfig.builder().messageAuthKeys(List.of(key)).requireMessageAuth(true))) {
            HubClient a = hub.agent("p/a");
            ObjectNode unsigned = claim(a, "TH", "h.py");
            a.send(unsigned);
            assertThat(a.awaitType("error", WAIT).path("verification_result").asText()).isEqualTo("missing");
            ObjectNode signed = sign(claim(a, "TH", "h.py"), "k1", "s3cret", "nonce-1",
                    System.currentTimeMillis() / 1000.0);
            a.send(signed);
            a.awaitType("claim_granted", WAIT);
            a.send(signed);
            assertThat(a.awaitType("error", WAIT).path("verification_result").asText()).isEqualTo("replayed");
            ObjectNode old = sign(claim(a, "TH", "h.py"), "k1", "s3cret", "nonce-2",
                    System.currentTimeMillis() / 1000.0 - 60);
            a.send(old);
            assertThat(a.awaitType("error", WAIT).path("verification_result").asText()).isEqualTo("expired");
            ObjectNode tampered = sign(claim(a, "TH", "h.py"), "k1", "s3cret", "nonce-3",
                    System.currentTimeMillis() / 1000.0);
            tampered.put("note", "changed after signing");
            a.send(tampered);
            assertThat(a.awaitType("error", WAIT).path("verification_result").asText())
                    .isEqualTo("bad_authentication");
            ObjectNode unknown = sign(claim(a, "TH", "h.py"), "k9", "s3cret", "nonce-4",
                    System.currentTimeMillis() / 1000.0);
            a.send(unknown);
            assertThat(a.awaitType("error", WAIT).path("verification_result").asText()).isEqualTo("unknown_key");
            a.send(a.frame("who_request"));
            a.awaitType("who_snapshot", WAIT);
            HubClient b = hub.agent("p/b");
            ObjectNode foreign = sign(claim(b, "TX", "x.py"), "k1", "s3cret", "nonce-5",
                    System.currentTimeMillis() / 1000.0);
            b.send(foreign);
            assertThat(b.awaitType("error", WAIT).path("verification_result").asText()).isEqualTo("sender_mismatch");
        }
    }

    @Test
    void replayWindowEdgesAreInclusive() {
        MessageAuthenticator auth = new MessageAuthenticator(List.of(new MessageAuthKey("k", "s", Set.of("p/a"))),
                true, 10.0, 1.0, 16);
        WireJson json = new WireJson(64);
        double now = 1_000_000.0;
        for (double skew : new double[] {-10.0, 1.0}) {
            ObjectNode f = (ObjectNode) json.parse("{\"sender\":\"p/a\",\"type\":\"claim\",\"task_id\":\"T\"}");
            sign(f, "k", "s", "n" + skew, now + skew);
            assertThat(auth.verify(f, "p/a", SigningTime.at(now))).isEqualTo("ok");
        }
        for (double skew : new double[] {-10.001, 1.001}) {
            ObjectNode f = (ObjectNode) json.parse("{\"sender\":\"p/a\",\"type\":\"claim\",\"task_id\":\"T\"}");
            sign(f, "k", "s", "m" + skew, now + skew);
            assertThat(auth.verify(f, "p/a", SigningTime.at(now))).isEqualTo("expired");
        }
        ObjectNode seq = (ObjectNode) json.parse("{\"sender\":\"p/a\",\"type\":\"claim\"}");
        sign(seq, "k", "s", "q", now);
        ((ObjectNode) seq.get("auth")).put("sequence", 0);
        assertThat(auth.verify(seq, "p/a", SigningTime.at(now))).isEqualTo("sequence_mismatch");
    }

    /**
     * INV-CK-2 after a wall-clock step (an NTP correction, a resumed VM): hub time slews toward
     * the wall clock at 1 %, but signers read their wall clocks, so the window is the wall
     * clock's. A frame signed now is admitted at once; one carrying the lagging hub time is stale.
     */
    @Test
    void aWallClockStepDoesNotExpireFramesSignedNow() {
        java.util.concurrent.atomic.AtomicLong wallMillis = new java.util.concurrent.atomic.AtomicLong(1_800_000_000_000L);
        java.util.concurrent.atomic.AtomicLong nanos = new java.util.concurrent.atomic.AtomicLong();
        dev.synapsehub.core.SteadyClock clock = new dev.synapsehub.core.SteadyClock(wallMillis::get, nanos::get, m -> { });
        wallMillis.addAndGet(30_000); // the host's NTP steps the wall clock 30 s forward
        wallMillis.addAndGet(1_000);
        nanos.addAndGet(1_000_000_000L);
        assertThat(clock.wallSeconds() - clock.nowSeconds()).as("hub time lags the step").isGreaterThan(25);
        MessageAuthenticator auth = new MessageAuthenticator(List.of(new MessageAuthKey("k", "s", Set.of("p/a"))),
                true, 10.0, 1.0, 16);
        WireJson json = new WireJson(64);
        ObjectNode fresh = (ObjectNode) json.parse("{\"sender\":\"p/a\",\"type\":\"claim\",\"task_id\":\"T\"}");
        sign(fresh, "k", "s", "n1", wallMillis.get() / 1000.0);
        assertThat(auth.verify(fresh, "p/a", SigningTime.of(clock))).isEqualTo("ok");
        ObjectNode hubTimed = (ObjectNode) json.parse("{\"sender\":\"p/a\",\"type\":\"claim\",\"task_id\":\"T\"}");
        sign(hubTimed, "k", "s", "n2", clock.nowSeconds());
        assertThat(auth.verify(hubTimed, "p/a", SigningTime.of(clock))).isEqualTo("expired");
    }

    /**
     * Review F6a: a signed frame refused {@code busy} ("retry shortly") applied nothing, so
     * sending it again unchanged must be judged afresh, never refused {@code replayed}.
     */
    @Test
    void aSignedFrameRefusedBusyMayBeSentAgainUnchanged() throws Exception {
        MessageAuthKey key = MessageAuthKey.parse("k1:s3cret:p/a");
        // a one-second linger keeps the first grant queued for p/b; a 1-byte limit makes that a backlog
        HubConfig.Builder config = HubConfig.builder().messageAuthKeys(List.of(key)).requireMessageAuth(true)
                .broadcastLinger(java.time.Duration.ofSeconds(1)).maxFanoutBacklogBytes(1);
        try (TestHub hub = new TestHub(config)) {
            HubClient a = hub.agent("p/a");
            hub.agent("p/b");
            hub.awaitBroadcastsHandedOut();
            a.send(sign(claim(a, "T1", "a.py"), "k1", "s3cret", "nonce-1", System.currentTimeMillis() / 1000.0));
            a.awaitType("claim_granted", WAIT);
            ObjectNode second = sign(claim(a, "T2", "b.py"), "k1", "s3cret", "nonce-2", System.currentTimeMillis() / 1000.0);
            a.send(second);
            assertThat(a.awaitType("error", WAIT).path("error_code").asText()).isEqualTo("busy");
            // bounded by time, paced: resending as fast as the answers come kept the hub's loops so
            // busy on a loaded CI machine that 10,000 attempts ran out before the 1 s linger's drain
            long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
            for (int attempt = 0; ; attempt++) {
                assertThat(System.nanoTime()).as("granted once the backlog drained (attempt %d)", attempt)
                        .isLessThan(deadline);
                if (attempt > 0) {
                    Thread.sleep(5);
                }
                a.clearPending();
                a.send(second);
                ObjectNode reply = a.await(f -> "claim_granted".equals(f.path("type").asText())
                        || "error".equals(f.path("type").asText()), WAIT);
                if ("claim_granted".equals(reply.path("type").asText())) {
                    break;
                }
                assertThat(reply.path("error_code").asText()).as(reply.toString()).isEqualTo("busy");
            }
            a.send(second);
            assertThat(a.awaitType("error", WAIT).path("verification_result").asText())
                    .as("once applied, the same frame is a replay").isEqualTo("replayed");
        }
    }

    /** Review F6b/F6c: nonces are bounded in length, and one key's flood fills only its own share. */
    @Test
    void oneKeysFloodNeverRefusesAnotherKeysFreshFramesAndNoncesAreBounded() {
        MessageAuthenticator auth = new MessageAuthenticator(List.of(new MessageAuthKey("k1", "noisy", Set.of("p/noisy")),
                new MessageAuthKey("k2", "quiet", Set.of("p/quiet"))), true, 10.0, 1.0, 4);
        WireJson json = new WireJson(64);
        double now = 1_000_000.0;
        List<String> noisy = new java.util.ArrayList<>();
        for (int i = 0; i < 4; i++) { // k1's signer tries to fill the whole cache
            ObjectNode f = (ObjectNode) json.parse("{\"sender\":\"p/noisy\",\"type\":\"claim\"}");
            noisy.add(auth.verify(sign(f, "k1", "noisy", "n" + i, now), "p/noisy", SigningTime.at(now)));
        }
        for (int i = 0; i < 2; i++) {
            ObjectNode f = (ObjectNode) json.parse("{\"sender\":\"p/quiet\",\"type\":\"claim\"}");
            assertThat(auth.verify(sign(f, "k2", "quiet", "q" + i, now), "p/quiet", SigningTime.at(now)))
                    .as("another key's fresh frame").isEqualTo("ok");
        }
        assertThat(noisy).as("k1 fills its own share, half of 4").containsExactly("ok", "ok", "replayed", "replayed");
        ObjectNode longest = (ObjectNode) json.parse("{\"sender\":\"p/quiet\",\"type\":\"claim\"}");
        sign(longest, "k2", "quiet", "x".repeat(MessageAuthenticator.MAX_NONCE_LENGTH + 1), now);
        assertThat(auth.verify(longest, "p/quiet", SigningTime.at(now))).isEqualTo("bad_authentication");
        ObjectNode edge = (ObjectNode) json.parse("{\"sender\":\"p/quiet\",\"type\":\"claim\"}");
        sign(edge, "k2", "quiet", "x".repeat(MessageAuthenticator.MAX_NONCE_LENGTH), now + 11);
        assertThat(auth.verify(edge, "p/quiet", SigningTime.at(now + 11))).isEqualTo("ok");
    }

    static ObjectNode sign(ObjectNode frame, String kid, String secret, String nonce, double ts) {
        ObjectNode auth = frame.putObject("auth");
        auth.put("alg", "hmac-sha256").put("kid", kid).put("nonce", nonce).put("sequence", 1).put("timestamp", ts);
        auth.put("value", MessageAuthenticator.mac(secret, MessageAuthenticator.canonicalBytes(frame)));
        return frame;
    }
}
