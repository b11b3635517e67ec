package dev.synapsehub.cli;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** A row skipped at start-up reaches {@code /health} and {@code /metrics} as a measured count, not a constant. */
class CorruptRowHealthTest {
    @TempDir
    Path dir;

    private final LoopbackHub hub = new LoopbackHub();

    @AfterEach
    void stop() throws Exception {
        hub.close();
    }

    static String get(int port, String path) throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + port + path)).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(200);
        return r.body();
    }

    @Test
    void aHubThatSkippedACorruptRowSaysDegradedWithTheCountAndKeepsServing() throws Exception {
        Path db = dir.resolve("hub.db");
        HubDaemon first = hub.start("--port", "0", "--db", db.toString(), "--metrics");
        assertThat(CliTest.run("claim", "T1", "--url", hub.url()).code()).isEqualTo(ExitCodes.OK);
        assertThat(get(first.port(), "/health")).contains("\"status\":\"ok\"").contains("\"journal_corrupt_rows\":0");
        hub.close();

        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db); Statement s = c.createStatement()) {
            s.executeUpdate("INSERT INTO events(ts, kind, durability, payload) VALUES (1.0, 'claim', 'FULL',"
                    + " '{\"task_id\":\"T1\",\"owner\":\"x\",\"epoch\":9,\"lease_expires_at\":1e99,\"checkpoint\":null}')");
        }

        HubDaemon second = hub.start("--port", "0", "--db", db.toString(), "--metrics");
        String health = get(second.port(), "/health");
        assertThat(health).contains("\"status\":\"degraded\"").contains("\"journal_corrupt_rows\":1")
                .contains("\"active_claims\":1");
        assertThat(get(second.port(), "/metrics")).contains("synapse_journal_corrupt_rows 1");
        assertThat(CliTest.run("state", "--url", hub.url()).out()).contains("T1").contains("operator/cli");
    }
}
