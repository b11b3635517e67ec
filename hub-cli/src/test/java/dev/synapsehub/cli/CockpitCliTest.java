package dev.synapsehub.cli;

import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code --ui}: the hub serves the cockpit when asked (a mesh node too: {@code CockpitClusterBrowserTest}). */
class CockpitCliTest {
    private static HttpResponse<String> get(int port, String path) throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void uiServesTheCockpitOnTheHubPort() throws Exception {
        try (LoopbackHub hub = new LoopbackHub()) {
            int port = hub.start("--port", "0", "--ui").port();
            assertThat(get(port, "/ui/").body()).contains("synapse-hub cockpit");
            assertThat(get(port, "/ui/api/overview").body()).contains("\"hub_id\"");
        }
        try (LoopbackHub hub = new LoopbackHub()) {
            int port = hub.start("--port", "0").port();
            assertThat(get(port, "/ui/api/overview").statusCode()).as("off without --ui").isNotEqualTo(200);
        }
    }
}
