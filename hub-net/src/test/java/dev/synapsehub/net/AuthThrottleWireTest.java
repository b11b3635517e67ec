package dev.synapsehub.net;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.core.Clock;
import dev.synapsehub.net.auth.AuthThrottleSettings;
import dev.synapsehub.net.auth.MessageAuthenticator;
import dev.synapsehub.net.auth.MetricsAuth;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Guessing a credential from one host over the real wire: after the limit of failures the host's
 * next attempt is refused unchecked, the right credential included, with the capacity refusal
 * clients retry (never the terminal bad-token close); once the back-off has passed on the hub's clock, the right one works.
 */
class AuthThrottleWireTest {
    private static final double BASE = 1_700_000_000.0;
    /** Three failures a minute, 30 s back-off; loopback counted, as the test's clients come from 127.0.0.1. */
    private static final AuthThrottleSettings THREE_THEN_30S = new AuthThrottleSettings(3, Duration.ofSeconds(60),
            Duration.ofSeconds(30), Duration.ofSeconds(120), 100, true);

    /** The edge's clock, set by the test. */
    static final class ManualClock implements Clock {
        private volatile double now = BASE;

        @Override
        public double nowSeconds() {
            return now;
        }

        void at(double offsetSeconds) {
            now = BASE + offsetSeconds;
        }
    }

    private static HubClient.CloseStatus refusedRegistration(TestHub hub, String token, String expectedPayload)
            throws Exception {
        HubClient c = hub.connect();
        ObjectNode hb = c.frame("p/guesser", "heartbeat");
        hb.put("token", token);
        c.send(hb);
        ObjectNode denied = c.awaitType("auth_denied", WAIT);
        assertThat(denied.path("payload").asText()).as("with " + token).contains(expectedPayload);
        assertThat(c.pending()).noneMatch(f -> "welcome".equals(f.path("type").asText()));
        return c.awaitClose(WAIT);
    }

    /**
     * A first frame with {@code token} from a host in its back-off: a private {@code error}
     * ({@code rate_limited}, saying when to retry), then the close clients retry.
     */
    private static HubClient.CloseStatus throttledRegistration(TestHub hub, String token, String expectedPayload)
            throws Exception {
        HubClient c = hub.connect();
        ObjectNode hb = c.frame("p/healthy", "heartbeat");
        hb.put("token", token);
        c.send(hb);
        ObjectNode refused = c.awaitType("error", WAIT);
        assertThat(refused.path("error_code").asText()).as(refused.toString()).isEqualTo("rate_limited");
        assertThat(refused.path("target").asText()).isEqualTo("p/healthy");
        assertThat(refused.path("payload").asText()).contains(expectedPayload);
        assertThat(c.pending()).noneMatch(f -> "auth_denied".equals(f.path("type").asText())
                || "welcome".equals(f.path("type").asText()));
        return c.awaitClose(WAIT);
    }

    private static long counter(TestHub hub, String name) throws Exception {
        for (String line : HttpGet.body(hub.port, "/metrics").split("\n")) {
            if (line.startsWith(name + " ")) {
                return (long) Double.parseDouble(line.substring(name.length() + 1).trim());
            }
        }
        throw new AssertionError(name + " not on /metrics");
    }

    @Test
    void afterTheLimitOfWrongTokensEvenTheRightOneIsDeniedUntilTheBackOffPasses() throws Exception {
        ManualClock clock = new ManualClock();
        try (TestHub hub = new TestHub(HubConfig.builder().token("sekrit").metricsEnabled(true)
                .authThrottle(THREE_THEN_30S), clock)) {
            for (int i = 0; i < 3; i++) {
                assertThat(refusedRegistration(hub, "guess-" + i, "invalid token"))
                        .isEqualTo(new HubClient.CloseStatus(4010, "auth denied"));
            }
            assertThat(throttledRegistration(hub, "sekrit", "Too many failed authentication attempts"))
                    .as("the token unchecked: a capacity refusal (4014, \"too many\"), which clients retry,"
                            + " not 4010 \"auth\", which they take as their own bad token and stop for good")
                    .isEqualTo(new HubClient.CloseStatus(4014, "too many failed authentication attempts"));
            clock.at(29);
            assertThat(throttledRegistration(hub, "sekrit", "retry in 1 s").code()).isEqualTo(4014);
            assertThat(counter(hub, "synapse_auth_failures_throttled_total")).isEqualTo(2);
            assertThat(counter(hub, "synapse_auth_failures_total")).as("only the checked ones").isEqualTo(3);

            clock.at(30);
            HubClient ok = hub.connect();
            assertThat(ok.register("p/alpha", "sekrit", WAIT).path("type").asText()).isEqualTo("welcome");
        }
    }

    @Test
    void wrongWebSocketTokensAlsoStopTheCockpitsBearerCheckOfTheSameToken() throws Exception {
        ManualClock clock = new ManualClock();
        try (TestHub hub = new TestHub(HubConfig.builder().token("sekrit").ui(true).authThrottle(THREE_THEN_30S),
                clock)) {
            String right = overview(hub.port, "Bearer sekrit");
            assertThat(right).startsWith("HTTP/1.1 200 OK\r\n");
            for (int i = 0; i < 3; i++) {
                refusedRegistration(hub, "guess-" + i, "invalid token");
            }
            String throttled = overview(hub.port, "Bearer sekrit");
            assertThat(throttled).as("one host, one count: the same token over HTTP is not checked either")
                    .startsWith("HTTP/1.1 401 Unauthorized\r\n").contains("auth_throttled").contains("retry in 30 s");
            clock.at(30);
            assertThat(overview(hub.port, "Bearer sekrit")).startsWith("HTTP/1.1 200 OK\r\n");
        }
    }

    private static String overview(int port, String authorization) throws Exception {
        return HttpGet.raw(port, "GET /ui/api/overview HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\nAuthorization: "
                + authorization + "\r\nConnection: close\r\n\r\n");
    }

    @Test
    void theMetricsBearerTokenIsThrottledTheSameWay() throws Exception {
        ManualClock clock = new ManualClock();
        try (TestHub hub = new TestHub(HubConfig.builder().metricsEnabled(true)
                .metricsAuth(new MetricsAuth("s3cret-metrics", false)).authThrottle(THREE_THEN_30S), clock)) {
            for (int i = 0; i < 3; i++) {
                assertThat(get(hub.port, "Bearer wrong-" + i)).startsWith("HTTP/1.1 401 Unauthorized\r\n");
            }
            String throttled = get(hub.port, "Bearer s3cret-metrics");
            assertThat(throttled).as("the documented 401 with its challenge, the token unchecked")
                    .startsWith("HTTP/1.1 401 Unauthorized\r\n")
                    .contains("Bearer realm=\"synapse-metrics\"")
                    .contains("too many failed attempts from this host: retry in 30 s")
                    .doesNotContain("synapse_up");
            clock.at(30);
            String served = get(hub.port, "Bearer s3cret-metrics");
            assertThat(served).startsWith("HTTP/1.1 200 OK\r\n").contains("synapse_auth_failures_throttled_total 1");
        }
    }

    @Test
    void wrongMessageSignaturesThrottleTheHostsSignedFrames() throws Exception {
        ManualClock clock = new ManualClock();
        try (TestHub hub = new TestHub(HubConfig.builder().authThrottle(THREE_THEN_30S)
                .messageAuthKeys(List.of(MessageAuthKey.parse("k1:s3cret:p/a"))).requireMessageAuth(true), clock)) {
            HubClient a = hub.agent("p/a");
            for (int i = 0; i < 3; i++) {
                a.send(sign(claim(a, "T" + i), "guess-" + i, "n" + i, BASE));
                assertThat(a.awaitType("error", WAIT).path("verification_result").asText())
                        .isEqualTo("bad_authentication");
            }
            a.send(sign(claim(a, "T9"), "s3cret", "n9", BASE));
            ObjectNode refused = a.awaitType("error", WAIT);
            assertThat(refused.path("error_code").asText()).as(refused.toString()).isEqualTo("rate_limited");
            assertThat(refused.has("verification_result")).as("not checked").isFalse();
            assertThat(a.isOpen()).isTrue();
            clock.at(30);
            a.send(sign(claim(a, "T9"), "s3cret", "n9", BASE + 30));
            assertThat(a.awaitType("claim_granted", WAIT).path("task_id").asText()).isEqualTo("T9");
        }
    }

    @Test
    void aRetiredSigningKeyIsNoGuessAndLocksNobodyOut() throws Exception {
        ManualClock clock = new ManualClock();
        try (TestHub hub = new TestHub(HubConfig.builder().token("sekrit").authThrottle(THREE_THEN_30S)
                .messageAuthKeys(List.of(MessageAuthKey.parse("k1:s3cret:p/a"))).requireMessageAuth(true), clock)) {
            HubClient a = hub.connect();
            assertThat(a.register("p/a", "sekrit", WAIT).path("type").asText()).isEqualTo("welcome");
            for (int i = 0; i < 5; i++) { // still signing with the key rotated out
                a.send(sign(claim(a, "T" + i), "k0", "old-secret", "n" + i, BASE));
                assertThat(a.awaitType("error", WAIT).path("verification_result").asText()).isEqualTo("unknown_key");
            }
            a.send(sign(claim(a, "T9"), "s3cret", "n9", BASE));
            assertThat(a.awaitType("claim_granted", WAIT).path("task_id").asText())
                    .as("its host is in no back-off: the rotated key's frames were no guesses").isEqualTo("T9");
            HubClient neighbour = hub.connect();
            assertThat(neighbour.register("p/b", "sekrit", WAIT).path("type").asText()).isEqualTo("welcome");
        }
    }

    private static String get(int port, String authorization) throws Exception {
        return HttpGet.raw(port, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: " + authorization
                + "\r\nConnection: close\r\n\r\n");
    }

    private static ObjectNode claim(HubClient c, String task) {
        ObjectNode f = c.frame("claim");
        f.put("task_id", task).put("worktree", "wt").put("ttl_seconds", 60.0);
        f.putArray("paths").add(task + ".py");
        return f;
    }

    private static ObjectNode sign(ObjectNode frame, String secret, String nonce, double ts) {
        return sign(frame, "k1", secret, nonce, ts);
    }

    private static ObjectNode sign(ObjectNode frame, String kid, String secret, String nonce, double ts) {
        ObjectNode auth = frame.putObject("auth");
        auth.put("alg", "hmac-sha256").put("kid", kid).put("nonce", nonce).put("sequence", 1).put("timestamp", ts);
        auth.put("value", MessageAuthenticator.mac(secret, MessageAuthenticator.canonicalBytes(frame)));
        return frame;
    }
}
