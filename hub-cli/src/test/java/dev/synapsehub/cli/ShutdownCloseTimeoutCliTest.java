package dev.synapsehub.cli;

import static dev.synapsehub.cli.CliTest.run;
import static org.assertj.core.api.Assertions.assertThat;

import dev.synapsehub.net.HubConfig;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** {@code --shutdown-close-timeout}: validated at start, in the config and the effective-config line, and what the stop waits at most. */
class ShutdownCloseTimeoutCliTest {

    @Test
    void aNegativeNonFiniteOrHugeBudgetIsRefusedNamingTheOption() {
        for (String bad : new String[] {"-1", "NaN", "Infinity", "3601"}) {
            CliTest.Run r = run("--port", "0", "--shutdown-close-timeout", bad);
            assertThat(r.code()).as(bad).isEqualTo(ExitCodes.USAGE);
            assertThat(r.err()).as(bad).contains("--shutdown-close-timeout must be a number of seconds within 0..3600");
        }
        CliTest.Run word = run("--port", "0", "--shutdown-close-timeout", "soon");
        assertThat(word.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(word.err()).contains("--shutdown-close-timeout");
    }

    @Test
    void theBudgetReachesTheConfigAndTheEffectiveConfigurationLine() {
        ServeOptions set = serve("--shutdown-close-timeout", "0.25");
        HubConfig config = set.hubConfig();
        assertThat(config.shutdownCloseTimeout()).hasMillis(250);
        assertThat(set.effectiveSummary(config, set.registryLimits(), set.actorSettings()))
                .containsEntry("shutdown_close_timeout_s", 0.25);
        assertThat(serve("--shutdown-close-timeout", "0").hubConfig().shutdownCloseTimeout()).isZero();
        ServeOptions defaults = serve();
        assertThat(defaults.hubConfig().shutdownCloseTimeout()).isEqualTo(HubConfig.DEFAULT_SHUTDOWN_CLOSE_TIMEOUT)
                .hasSeconds(5);
        assertThat(defaults.effectiveSummary(defaults.hubConfig(), defaults.registryLimits(), defaults.actorSettings()))
                .containsEntry("shutdown_close_timeout_s", 5.0);
    }

    @Test
    void theStopWaitsForAPeerThatNeverAnswersOnlyTheConfiguredBudget() throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        try (LoopbackHub hub = new LoopbackHub()) {
            HubDaemon daemon = hub.start("--port", "0", "--shutdown-close-timeout", "1");
            CompletableFuture<Integer> closeCode = new CompletableFuture<>();
            WebSocket silent = http.newWebSocketBuilder().buildAsync(URI.create(hub.url() + "/"), new WebSocket.Listener() {
                @Override
                public CompletionStage<?> onClose(WebSocket ws, int status, String reason) {
                    closeCode.complete(status);
                    return new CompletableFuture<Void>(); // never completes: the JDK client never answers the close
                }
            }).get(10, TimeUnit.SECONDS);
            long start = System.nanoTime();
            hub.close(); // what the SIGTERM hook runs
            long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertThat(closeCode.get(10, TimeUnit.SECONDS)).isEqualTo(1001);
            // waited for the answer, then gave up after about its budget: well before the default 5 s
            assertThat(took).isBetween(800L, 15_000L); // waited; the upper bound is loose on a shared machine
            silent.abort();
        }
    }

    private static ServeOptions serve(String... args) {
        SynapseHubCommand command = new SynapseHubCommand();
        new CommandLine(command).parseArgs(args);
        return command.serve;
    }
}
