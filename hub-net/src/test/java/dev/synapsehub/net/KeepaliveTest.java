package dev.synapsehub.net;

import dev.synapsehub.client.HubClient;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/** Contract §3.1 keepalive: the hub pings a silent peer and drops it when no pong comes back. */
class KeepaliveTest {
    private static final Duration PING = Duration.ofMillis(300);

    @Test
    void aSilentPeerThatAnswersPingsStaysConnected() throws Exception {
        try (TestHub hub = new TestHub(HubConfig.builder().pingInterval(PING))) {
            HubClient quiet = hub.agent("p/quiet");
            Thread.sleep(PING.toMillis() * 8); // sends nothing itself; Netty answers the hub's pings
            assertThat(quiet.isOpen()).isTrue();
            assertThat(hub.server.services().registry().isOnline("p/quiet")).isTrue();
            quiet.send(quiet.frame("who_request"));
            assertThat(quiet.awaitType("who_snapshot", WAIT).path("online_agents").toString()).contains("p/quiet");
        }
    }

    @Test
    void aPeerThatNeverAnswersPingsIsDroppedAndLeaves() throws Exception {
        try (TestHub hub = new TestHub(HubConfig.builder().pingInterval(PING))) {
            HubClient observer = hub.agent("p/observer");
            HubClient deaf = hub.agent("p/deaf");
            deaf.pauseReading(); // never reads the ping, so never answers it
            long start = System.nanoTime();
            observer.await(f -> "presence_update".equals(f.path("type").asText())
                    && "left".equals(f.path("event").asText()) && "p/deaf".equals(f.path("agent").asText()), WAIT);
            long tookMillis = (System.nanoTime() - start) / 1_000_000;
            // one interval of silence before the ping, one more for the missing pong
            assertThat(tookMillis).isBetween(PING.toMillis(), PING.toMillis() * 10);
            assertThat(hub.server.services().registry().isOnline("p/deaf")).isFalse();
            assertThat(hub.server.services().registry().isOnline("p/observer")).isTrue();
        }
    }
}
