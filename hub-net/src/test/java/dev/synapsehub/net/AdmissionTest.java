package dev.synapsehub.net;

import dev.synapsehub.client.HubClient;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.Clock;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Contract §3.2 row 6 (a first frame that binds no name ⇒ 4010) and the takeover throttles
 * (4014 {@code takeover cooldown} / {@code takeover quarantine}), the latter on a manual clock.
 */
class AdmissionTest {
    private static final double BASE = 1_700_000_000.0;

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

    /**
     * First frames that bind nothing: refused by §4.3 steps 1, 2 and 4 before any name is
     * read. Each gets its private error (target "all"), then the socket is closed 4010.
     */
    private static Map<String, byte[]> unbindingFirstFrames() {
        Map<String, byte[]> m = new LinkedHashMap<>();
        m.put("Malformed JSON.", "hello".getBytes(StandardCharsets.UTF_8));
        m.put("Malformed JSON.|truncated", "{\"sender\":\"p/a\",\"type\":\"heartbeat\"".getBytes(StandardCharsets.UTF_8));
        m.put("Malformed JSON.|NaN", "{\"sender\":\"p/a\",\"x\":NaN}".getBytes(StandardCharsets.UTF_8));
        m.put("Malformed JSON.|deep", ("{\"sender\":\"p/a\",\"x\":" + "[".repeat(100) + "]".repeat(100) + "}")
                .getBytes(StandardCharsets.UTF_8));
        m.put("Malformed JSON.|utf8", new byte[] {'{', '"', 's', 'e', 'n', 'd', 'e', 'r', '"', ':', '"', (byte) 0xc3,
                (byte) 0x28, '"', '}'});
        m.put("Malformed frame: expected a JSON object.|array", "[{\"sender\":\"p/a\"}]".getBytes(StandardCharsets.UTF_8));
        m.put("Malformed frame: expected a JSON object.|number", "42".getBytes(StandardCharsets.UTF_8));
        m.put("Malformed frame: expected a JSON object.|null", "null".getBytes(StandardCharsets.UTF_8));
        m.put("Malformed frame: 'sender' must be a string.", "{\"sender\":5,\"type\":\"heartbeat\"}".getBytes(StandardCharsets.UTF_8));
        m.put("Malformed frame: 'type' must be a string.|array", "{\"sender\":\"p/a\",\"type\":[\"heartbeat\"]}"
                .getBytes(StandardCharsets.UTF_8));
        m.put("Malformed frame: 'target' must be a string.", "{\"sender\":\"p/a\",\"target\":{},\"type\":\"heartbeat\"}"
                .getBytes(StandardCharsets.UTF_8));
        m.put("Malformed frame: 'channel' must be a string.", "{\"sender\":\"p/a\",\"channel\":true}"
                .getBytes(StandardCharsets.UTF_8));
        return m;
    }

    @Test
    void openHubFirstFrameThatBindsNoNameGetsItsErrorThenRegistrationRequired4010() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient observer = hub.agent("p/observer");
            for (Map.Entry<String, byte[]> e : unbindingFirstFrames().entrySet()) {
                String payload = e.getKey().split("\\|")[0];
                HubClient c = hub.connect();
                c.awaitType("welcome", WAIT);
                c.channelWriteText(e.getValue());
                ObjectNode error = c.awaitType("error", WAIT);
                assertThat(error.path("payload").asText()).as(e.getKey()).isEqualTo(payload);
                assertThat(error.path("target").asText()).as(e.getKey()).isEqualTo("all");
                assertThat(c.awaitClose(WAIT)).as(e.getKey())
                        .isEqualTo(new HubClient.CloseStatus(4010, "registration required"));
            }
            // none of them bound a name, joined, or stayed in the connection table
            TestHub.assertQuiet(observer);
            observer.send(observer.frame("who_request"));
            ObjectNode who = observer.awaitType("who_snapshot", WAIT);
            assertThat(who.path("online_agents").toString()).isEqualTo("[\"p/observer\"]");
            assertThat(hub.server.services().registry().connectedClients()).isEqualTo(1);
            assertThat(hub.server.services().metrics().faults.get()).isZero();
        }
    }

    @Test
    void aFirstFrameWithoutSenderStillBindsAnAnonymousName() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient c = hub.connect();
            c.awaitType("welcome", WAIT);
            c.sendText("{\"type\":\"who_request\"}");
            ObjectNode joined = c.awaitType("presence_update", WAIT);
            assertThat(joined.path("agent").asText()).startsWith("anon-");
            assertThat(c.awaitType("who_snapshot", WAIT).path("online_agents").toString()).contains("anon-");
            assertThat(c.isOpen()).isTrue();
        }
    }

    @Test
    void aBoundSocketKeepsItsConnectionOnTheSameErrors() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient c = hub.agent("p/a");
            for (byte[] bad : unbindingFirstFrames().values()) {
                c.channelWriteText(bad);
                assertThat(c.awaitType("error", WAIT).path("target").asText()).isEqualTo("all");
            }
            c.send(c.frame("who_request"));
            c.awaitType("who_snapshot", WAIT);
            assertThat(c.isOpen()).isTrue();
        }
    }

    @Test
    void tokenHubFirstFrameThatBindsNoNameIsClosedAuthRequired4010() throws Exception {
        try (TestHub hub = new TestHub(HubConfig.builder().token("sekrit"))) {
            HubClient lurker = hub.connect();
            for (Map.Entry<String, byte[]> e : unbindingFirstFrames().entrySet()) {
                HubClient c = hub.connect();
                c.channelWriteText(e.getValue());
                ObjectNode error = c.awaitType("error", WAIT);
                assertThat(error.path("payload").asText()).as(e.getKey()).isEqualTo(e.getKey().split("\\|")[0]);
                assertThat(c.awaitClose(WAIT)).as(e.getKey()).isEqualTo(new HubClient.CloseStatus(4010, "auth required"));
                assertThat(c.received()).as(e.getKey()).hasSize(1); // no welcome, no presence
            }
            // a frame carrying the right token but a mistyped field still authenticates nothing
            HubClient typed = hub.connect();
            typed.sendText("{\"sender\":\"p/a\",\"token\":\"sekrit\",\"type\":7}");
            typed.awaitType("error", WAIT);
            assertThat(typed.awaitClose(WAIT)).isEqualTo(new HubClient.CloseStatus(4010, "auth required"));
            Thread.sleep(200);
            assertThat(lurker.received()).isEmpty();
            assertThat(hub.server.services().registry().online()).isEmpty();
        }
    }

    // ------------------------------------------------------------------------- takeovers

    private static HubClient attempt(TestHub hub, String name) throws Exception {
        HubClient c = hub.connect();
        c.awaitType("welcome", WAIT);
        ObjectNode hb = c.frame(name, "heartbeat");
        hb.put("takeover", true);
        c.send(hb);
        return c;
    }

    /** A takeover that must succeed: the old holder is superseded, the newcomer answers. */
    private static HubClient takeOver(TestHub hub, HubClient holder, String name) throws Exception {
        HubClient c = attempt(hub, name);
        assertThat(holder.awaitClose(WAIT)).isEqualTo(new HubClient.CloseStatus(4010, "superseded"));
        c.send(c.frame(name, "who_request"));
        c.awaitType("who_snapshot", WAIT);
        return c;
    }

    /** A takeover that must be refused with 4014 {@code reason}, leaving {@code holder} bound. */
    private static void refused(TestHub hub, HubClient holder, String name, String reason) throws Exception {
        HubClient c = attempt(hub, name);
        assertThat(c.awaitClose(WAIT)).isEqualTo(new HubClient.CloseStatus(4014, reason));
        assertThat(c.received()).extracting(f -> f.path("type").asText()).containsExactly("welcome");
        holder.send(holder.frame(name, "who_request"));
        holder.awaitType("who_snapshot", WAIT);
        assertThat(holder.isOpen()).isTrue();
        assertThat(hub.server.services().registry().session(name)).isNotNull();
    }

    @Test
    void takeoverWithinTheCooldownIsRefused4014() throws Exception {
        ManualClock clock = new ManualClock();
        try (TestHub hub = new TestHub(HubConfig.builder(), clock)) {
            HubClient holder = hub.agent("p/x");
            clock.at(0.5);
            holder = takeOver(hub, holder, "p/x"); // the first takeover is never in a cooldown
            clock.at(0.5 + 1.999);
            refused(hub, holder, "p/x", "takeover cooldown");
            clock.at(0.5 + 2.0);
            holder = takeOver(hub, holder, "p/x");
            clock.at(2.5 + 0.1);
            refused(hub, holder, "p/x", "takeover cooldown");
            // a plain bind of a free name is not a takeover and is never throttled
            holder.close();
            Thread.sleep(100);
            HubClient again = hub.agent("p/x");
            assertThat(again.isOpen()).isTrue();
            assertThat(hub.server.services().metrics().takeovers.get()).isEqualTo(2);
        }
    }

    @Test
    void fiveTakeoversWithinTheWindowPinTheNameToItsHolderFor60s() throws Exception {
        ManualClock clock = new ManualClock();
        try (TestHub hub = new TestHub(HubConfig.builder().metricsEnabled(true), clock)) {
            HubClient holder = hub.agent("p/q");
            for (int i = 1; i <= 5; i++) {
                clock.at(2.0 * i);
                holder = takeOver(hub, holder, "p/q"); // the 5th (t=10) still succeeds and pins
            }
            assertThat(hub.server.services().registry().takeoverQuarantines()).isEqualTo(1);
            clock.at(12);
            refused(hub, holder, "p/q", "takeover quarantine");
            clock.at(69.999);
            refused(hub, holder, "p/q", "takeover quarantine");
            clock.at(70);
            holder = takeOver(hub, holder, "p/q");
            clock.at(72);
            holder = takeOver(hub, holder, "p/q"); // history was reset when the pin started
            assertThat(hub.server.services().registry().takeoverQuarantines()).isEqualTo(1);
            assertThat(hub.server.services().metrics().takeovers.get()).isEqualTo(7);
            assertThat(HttpGet.body(hub.port, "/metrics")).contains("synapse_takeover_quarantines_total 1")
                    .contains("synapse_takeovers_total 7");
        }
    }

    @Test
    void takeoversSpreadBeyondTheWindowDoNotQuarantine() throws Exception {
        ManualClock clock = new ManualClock();
        try (TestHub hub = new TestHub(HubConfig.builder(), clock)) {
            HubClient holder = hub.agent("p/w");
            for (double t : List.of(2.0, 4.0, 6.0, 8.0, 38.0, 40.0, 42.0)) {
                clock.at(t); // never five within any 30 s
                holder = takeOver(hub, holder, "p/w");
            }
            assertThat(hub.server.services().registry().takeoverQuarantines()).isZero();
        }
    }

    @Test
    void quarantinePinsTakeoversOnlyAFreedNameBindsNormally() throws Exception {
        ManualClock clock = new ManualClock();
        try (TestHub hub = new TestHub(HubConfig.builder().takeoverCooldown(Duration.ZERO)
                .takeoverQuarantineThreshold(2).takeoverQuarantine(Duration.ofSeconds(5)), clock)) {
            HubClient holder = hub.agent("p/z");
            holder = takeOver(hub, holder, "p/z");
            holder = takeOver(hub, holder, "p/z"); // two takeovers, no cooldown: pinned
            refused(hub, holder, "p/z", "takeover quarantine");
            HubClient other = hub.agent("p/other"); // other names are not affected
            takeOver(hub, other, "p/other");
            holder.close();
            Thread.sleep(100);
            HubClient fresh = hub.agent("p/z"); // the holder left: a plain bind is not a takeover
            assertThat(fresh.isOpen()).isTrue();
        }
    }
}
