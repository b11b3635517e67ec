package dev.synapsehub.net;

import dev.synapsehub.client.HubClient;
import org.junit.jupiter.api.Test;

import java.io.IOException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A running hub counts a failed accept on /metrics, pauses accepting for about a second and then
 * accepts again; connections already open are untouched.
 */
class AcceptFailureWireTest {
    @Test
    void aFailedAcceptIsCountedOnMetricsAndTheHubAcceptsAgainAfterThePause() throws Exception {
        try (TestHub hub = new TestHub(HubConfig.builder().metricsEnabled(true))) {
            HubClient open = hub.agent("p/alpha");
            assertThat(HttpGet.body(hub.port, "/metrics")).contains("synapse_accept_failures_total 0\n");

            hub.server.listeningChannel().pipeline().fireExceptionCaught(new IOException("Too many open files"));
            // it runs on the accept loop: seen there before the next connection is made
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (hub.server.services().metrics().acceptFailures.get() == 0 && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            long seen = System.nanoTime();
            // the next connection waits out the pause, then is accepted
            String metrics = HttpGet.body(hub.port, "/metrics");
            assertThat(System.nanoTime() - seen).isGreaterThanOrEqualTo(
                    (dev.synapsehub.net.handler.AcceptFailureWatch.PAUSE_MILLIS - 200) * 1_000_000L);
            assertThat(metrics).contains("synapse_accept_failures_total 1\n");
            assertThat(open.isOpen()).isTrue();
        }
    }
}
