package dev.synapsehub.net;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import org.junit.jupiter.api.Test;

import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/** {@code /health} reports what is true of the running hub, with the HTTP status a probe acts on. */
class HealthTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** Stands for any Error on the writer thread. */
    private static final class InjectedError extends Error {
        InjectedError() {
            super("injected for the test");
        }
    }

    static JsonNode healthBody(String response) throws Exception {
        return JSON.readTree(response.substring(response.indexOf("\r\n\r\n") + 4));
    }

    @Test
    void aDeadWriterIsReportedFailedWith503AndRequestsAreAnsweredWithTheReason() throws Exception {
        try (TestHub hub = new TestHub(HubConfig.builder().metricsEnabled(true))) {
            HubClient a = hub.agent("p/alpha");
            String before = HttpGet.body(hub.port, "/health");
            assertThat(before).startsWith("HTTP/1.1 200");
            assertThat(healthBody(before).path("status").asText()).isEqualTo("ok");

            hub.actor.read(s -> {
                throw new InjectedError();
            });

            String after = HttpGet.body(hub.port, "/health");
            assertThat(after).startsWith("HTTP/1.1 503");
            JsonNode body = healthBody(after);
            assertThat(body.path("status").asText()).isEqualTo("failed");
            assertThat(body.path("reasons").toString()).contains("writer_failed");
            assertThat(body.path("writer").asText()).isEqualTo("failed");

            ObjectNode claim = a.frame("claim");
            claim.put("task_id", "T1");
            a.send(claim);
            ObjectNode refused = a.awaitType("error", WAIT);
            assertThat(refused.path("error_code").asText()).isEqualTo("writer_failed");
            assertThat(a.isOpen()).isTrue();
        }
    }
}
