package dev.synapsehub.cli;

import dev.synapsehub.net.HubConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static dev.synapsehub.cli.CliTest.parsed;
import static dev.synapsehub.cli.CliTest.run;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code --warn-stale-recipients} / {@code --no-warn-stale-recipients}, {@code --recipient-liveness-window}
 * and {@code --waiter-liveness-window} (contract §8.6, §13): parsed, validated once at start naming the
 * flag, carried in the config and in the effective-configuration line.
 */
class ConsumeLivenessCliTest {

    @Test
    void theDefaultsAreTheContracts() {
        ServeOptions serve = parsed().serve;
        HubConfig config = serve.hubConfig();
        assertThat(config.warnStaleRecipients()).isTrue();
        assertThat(config.recipientLivenessWindowSeconds()).isEqualTo(90.0);
        assertThat(config.waiterLivenessWindowSeconds()).isEqualTo(20.0);
        assertThat(serve.effectiveSummary(config, serve.registryLimits(), serve.actorSettings()))
                .containsEntry("warn_stale_recipients", "on")
                .containsEntry("recipient_liveness_window_s", 90.0)
                .containsEntry("waiter_liveness_window_s", 20.0);
    }

    @Test
    void theFlagsReachTheConfigAndTheEffectiveConfigurationLine() {
        ServeOptions serve = parsed("--no-warn-stale-recipients", "--recipient-liveness-window", "12.5",
                "--waiter-liveness-window", "3").serve;
        HubConfig config = serve.hubConfig();
        assertThat(config.warnStaleRecipients()).isFalse();
        assertThat(config.recipientLivenessWindowSeconds()).isEqualTo(12.5);
        assertThat(config.waiterLivenessWindowSeconds()).isEqualTo(3.0);
        assertThat(serve.effectiveSummary(config, serve.registryLimits(), serve.actorSettings()))
                .containsEntry("warn_stale_recipients", "off (socket presence)")
                .containsEntry("recipient_liveness_window_s", 12.5)
                .containsEntry("waiter_liveness_window_s", 3.0);
        assertThat(parsed("--warn-stale-recipients").serve.hubConfig().warnStaleRecipients()).isTrue();
    }

    @Test
    void aConfigFileMayTurnTrackingOff(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("hub.properties");
        Files.writeString(file, "warn-stale-recipients=false\nrecipient-liveness-window=45\n");
        HubConfig config = parsed("--config", file.toString()).serve.hubConfig();
        assertThat(config.warnStaleRecipients()).isFalse();
        assertThat(config.recipientLivenessWindowSeconds()).isEqualTo(45.0);
    }

    @Test
    void aWindowThatIsNotPositiveAndFiniteIsRefusedAtStartNamingTheFlag() {
        for (String flag : new String[] {"--recipient-liveness-window", "--waiter-liveness-window"}) {
            for (String bad : new String[] {"0", "-1", "NaN", "Infinity"}) {
                CliTest.Run r = run("--port", "0", flag, bad);
                assertThat(r.code()).as(flag + " " + bad).isEqualTo(ExitCodes.USAGE);
                assertThat(r.err()).as(flag + " " + bad).contains(flag + " must be a positive number of seconds");
            }
            CliTest.Run word = run("--port", "0", flag, "soon");
            assertThat(word.code()).isEqualTo(ExitCodes.USAGE);
            assertThat(word.err()).contains(flag);
        }
        CliTest.Run value = run("--port", "0", "--warn-stale-recipients=maybe");
        assertThat(value.code()).isEqualTo(ExitCodes.USAGE);
    }
}
