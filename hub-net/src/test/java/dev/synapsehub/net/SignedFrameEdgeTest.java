package dev.synapsehub.net;

import dev.synapsehub.client.HubClient;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.SpecConstants;
import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.journal.InMemoryJournal;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.net.auth.MessageAuthenticator;
import org.junit.jupiter.api.Test;

import java.math.BigInteger;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * INV-CK-2 edges over a real loopback WebSocket: a signed claim whose {@code auth.timestamp} is
 * not a finite number is refused and changes nothing, and a hub built with the default
 * {@link HubConfig} verifies with exactly the spec's −10 s / +1 s window (edges inclusive).
 *
 * <p>The hub runs on a frozen clock so the window edges are exact, not timing-dependent.
 */
class SignedFrameEdgeTest {
    private static final double NOW = 1_700_000_000.0;
    private static final MessageAuthKey KEY = MessageAuthKey.parse("k1:s3cret:p/a");

    @Test
    void builderDefaultsAreTheSpecConstants() {
        HubConfig defaults = HubConfig.builder().build();
        assertThat(defaults.messageAuthWindowSeconds())
                .isEqualTo(SpecConstants.DEFAULT_MESSAGE_AUTH_WINDOW_SECONDS);
        assertThat(defaults.messageAuthFutureSkewSeconds())
                .isEqualTo(SpecConstants.DEFAULT_MESSAGE_AUTH_FUTURE_SKEW_SECONDS);
        assertThat(defaults.leaseOfflineTtlSeconds()).isEqualTo(SpecConstants.DEFAULT_LEASE_OFFLINE_TTL);
    }

    @Test
    void aTimestampThatIsNotAFiniteNumberIsBadAuthenticationAndChangesNothing() throws Exception {
        try (FrozenHub hub = new FrozenHub()) {
            HubClient a = hub.agent("p/a");
            long seqBefore = hub.journal.lastSeq();
            List<Consumer<ObjectNode>> badTimestamps = List.of(
                    auth -> auth.put("timestamp", String.valueOf(NOW)),           // a numeric string
                    auth -> auth.put("timestamp", "NaN"),                        // NaN spelled as a string
                    auth -> auth.put("timestamp", "Infinity"),
                    auth -> auth.putNull("timestamp"),
                    auth -> auth.remove("timestamp"));                           // missing
            int n = 0;
            for (Consumer<ObjectNode> bad : badTimestamps) {
                a.send(signed(claim(a, "TS"), "nonce-" + n++, bad));
                ObjectNode e = a.awaitType("error", WAIT);
                assertThat(e.path("verification_result").asText()).as(e.toString()).isEqualTo("bad_authentication");
            }
            assertUnchanged(hub, a, seqBefore);

            // NaN / Infinity literals and a number overflowing a double (float or integer literal)
            // never pass the strict decoder: the frame is answered "Malformed JSON." before the
            // HMAC gate sees it.
            for (String literal : List.of("NaN", "Infinity", "-Infinity", "1e999", BigInteger.TEN.pow(400).toString())) {
                ObjectNode f = signed(claim(a, "TS"), "lit-" + literal, auth -> auth.put("timestamp", "@TS@"));
                a.sendText(f.toString().replace("\"@TS@\"", literal));
                ObjectNode e = a.awaitType("error", WAIT);
                assertThat(e.path("payload").asText()).isEqualTo("Malformed JSON.");
                assertThat(e.has("verification_result")).isFalse();
            }
            assertUnchanged(hub, a, seqBefore);

            // None of the refusals consumed its nonce: the same nonce, correctly signed, is admitted.
            a.send(signed(claim(a, "TS"), "nonce-0", auth -> auth.put("timestamp", NOW)));
            assertThat(a.awaitType("claim_granted", WAIT).path("task_id").asText()).isEqualTo("TS");
        }
    }

    @Test
    void theDefaultHubWindowIsMinusTenPlusOneSecondsInclusive() throws Exception {
        double past = SpecConstants.DEFAULT_MESSAGE_AUTH_WINDOW_SECONDS;
        double future = SpecConstants.DEFAULT_MESSAGE_AUTH_FUTURE_SKEW_SECONDS;
        try (FrozenHub hub = new FrozenHub()) {
            HubClient a = hub.agent("p/a");
            long seqBefore = hub.journal.lastSeq();
            for (double ts : new double[] {NOW - past - 0.001, NOW + future + 0.001}) {
                a.send(signed(claim(a, "TW"), "out-" + ts, auth -> auth.put("timestamp", ts)));
                assertThat(a.awaitType("error", WAIT).path("verification_result").asText()).isEqualTo("expired");
            }
            assertUnchanged(hub, a, seqBefore);
            a.send(signed(claim(a, "TW"), "edge-past", auth -> auth.put("timestamp", NOW - past)));
            a.awaitType("claim_granted", WAIT);
            a.send(signed(claim(a, "TW"), "edge-future", auth -> auth.put("timestamp", NOW + future)));
            a.awaitType("claim_granted", WAIT);
        }
    }

    private static void assertUnchanged(FrozenHub hub, HubClient a, long seqBefore) throws Exception {
        assertThat(TestHub.state(a).path("snapshot").path("active_claims").size()).isZero();
        assertThat(hub.journal.lastSeq()).isEqualTo(seqBefore);
        assertThat(a.pending()).noneMatch(f -> "claim_granted".equals(f.path("type").asText()));
    }

    private static ObjectNode claim(HubClient c, String task) {
        ObjectNode f = c.frame("claim");
        f.put("task_id", task).put("worktree", "wt").put("ttl_seconds", 60.0);
        f.putArray("paths").add("edge.py");
        return f;
    }

    /** Signs with a valid auth object, lets {@code edit} change it, then computes the MAC last. */
    private static ObjectNode signed(ObjectNode frame, String nonce, Consumer<ObjectNode> edit) {
        ObjectNode auth = frame.putObject("auth");
        auth.put("alg", "hmac-sha256").put("kid", "k1").put("nonce", nonce).put("sequence", 1).put("timestamp", NOW);
        edit.accept(auth);
        auth.put("value", MessageAuthenticator.mac("s3cret", MessageAuthenticator.canonicalBytes(frame)));
        return frame;
    }

    /** A hub with default settings plus enforced message auth, on a clock frozen at {@link #NOW}. */
    private static final class FrozenHub implements AutoCloseable {
        final InMemoryJournal journal = new InMemoryJournal();
        final CoordinationActor actor;
        final HubServer server;
        final URI uri;
        private final List<HubClient> clients = new ArrayList<>();

        FrozenHub() throws InterruptedException {
            actor = new CoordinationActor(new CoordinationState(), journal, () -> NOW, ActorSettings.DEFAULTS);
            actor.start();
            server = new HubServer(HubConfig.builder().host("127.0.0.1").port(0)
                    .messageAuthKeys(List.of(KEY)).requireMessageAuth(true).build(), actor, () -> NOW);
            uri = URI.create("ws://127.0.0.1:" + server.start() + "/");
        }

        HubClient agent(String name) throws Exception {
            HubClient c = HubClient.connect(uri, WAIT);
            clients.add(c);
            c.register(name, null, WAIT);
            c.await(f -> "presence_update".equals(f.path("type").asText()) && name.equals(f.path("agent").asText())
                && "joined".equals(f.path("event").asText()),
                    WAIT);
            return c;
        }

        @Override
        public void close() throws Exception {
            clients.forEach(HubClient::close);
            server.close();
            actor.close();
        }
    }
}
