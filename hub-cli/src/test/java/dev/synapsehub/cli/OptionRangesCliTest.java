package dev.synapsehub.cli;

import dev.synapsehub.net.HubConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * Option values out of range are refused at start (exit 2, naming the option and its range),
 * not clamped to a value the operator did not ask for, nor rounded to one that breaks the hub.
 */
class OptionRangesCliTest {

    private static ServeOptions serve(String... args) {
        return CliTest.parsed(args).serve;
    }

    /** A start with ARGS, bounded: a start that is not refused would serve until stopped. */
    private static CliTest.Run refusedStart(String... args) {
        return assertTimeoutPreemptively(Duration.ofSeconds(30), () -> CliTest.run(args));
    }

    @Test
    void aBurstBelowOneIsRefusedForItWouldAnswerEveryFrameRateLimited() {
        for (String bad : new String[] {"0", "-3"}) {
            CliTest.Run run = refusedStart("--port", "0", "--rate", "5", "--burst", bad);
            assertThat(run.code()).as(bad).isEqualTo(ExitCodes.USAGE);
            assertThat(run.err()).contains("--burst must be at least 1 (got " + bad + ")");
        }
        assertThat(serve("--rate", "5", "--burst", "1").hubConfig().rateBurst()).isEqualTo(1);
    }

    @Test
    void countsOutOfRangeAreRefusedNotClamped() {
        String[][] refused = {{"--max-clients", "0", "1"}, {"--max-clients", "-5", "1"},
                {"--max-connections-per-host", "-32", "0"}, {"--max-unauth-clients", "-3", "0"},
                {"--presence-fanout-limit", "-1", "0"}, {"--message-auth-replay-capacity", "0", "1"}};
        for (String[] bad : refused) {
            assertThatThrownBy(() -> serve(bad[0], bad[1]).hubConfig()).as(bad[0] + " " + bad[1])
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage(bad[0] + " must be at least " + bad[2] + " (got " + bad[1] + ")");
        }
        CliTest.Run run = refusedStart("--port", "0", "--max-connections-per-host", "-32");
        assertThat(run.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(run.err()).contains("--max-connections-per-host must be at least 0 (got -32)");
        // the documented special values stay: 0 = no per-host cap, = --max-clients, = always broadcast
        HubConfig zeros = serve("--max-connections-per-host", "0", "--max-unauth-clients", "0",
                "--presence-fanout-limit", "0", "--max-clients", "7").hubConfig();
        assertThat(zeros.maxConnectionsPerHost()).isZero();
        assertThat(zeros.maxUnauthClients()).isEqualTo(7);
        assertThat(zeros.presenceFanoutLimit()).isZero();
    }

    @Test
    void aWatchIntervalBelowItsDocumentedSecondIsRefusedNotRaised() {
        SynapseHubCommand command = CliTest.parsed("--multihub-watch-interval", "0.2");
        assertThatThrownBy(() -> command.federation.settings(dev.synapsehub.federation.trust.ServingTrust.none(),
                null, "syn-00000000"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--multihub-watch-interval must be a number of seconds of at least 1 (got 0.2)");
        SynapseHubCommand one = CliTest.parsed("--multihub-watch-interval", "1");
        one.federation.settings(dev.synapsehub.federation.trust.ServingTrust.none(), null, "syn-00000000");
    }

    @Test
    void aDurationThatWouldRoundToNoMillisecondIsRefusedByEveryOptionInSeconds(@TempDir Path dir) {
        for (String option : new String[] {"--auth-timeout", "--takeover-cooldown", "--shutdown-close-timeout"}) {
            for (String bad : new String[] {"0.0004", "NaN"}) {
                assertThatThrownBy(() -> serve(option, bad).hubConfig()).as(option + " " + bad)
                        .isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining(option + " must be a number of seconds")
                        .hasMessageContaining("at least 0.001").hasMessageContaining("(got " + bad + ")");
            }
        }
        CliTest.Run run = refusedStart("--port", "0", "--auth-timeout", "0.0004");
        assertThat(run.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(run.err()).contains("--auth-timeout must be a number of seconds of at least 0.001 (got 0.0004)");
        ServeOptions node = serve("--db", dir.resolve("n1.db").toString(), "--mesh-id", "n1", "--mesh-peers",
                "n1=127.0.0.1:1", "--mesh-commit-timeout", "0.0004");
        assertThatThrownBy(node::meshConfig).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--mesh-commit-timeout must be a number of seconds of at least 0.001");
        // the mesh commands' --timeout too: no voter is asked with a deadline of 0 ms
        String peers = "n1=127.0.0.1:1";
        for (String[] command : new String[][] {{"mesh", "status", "--mesh-peers", peers},
                {"mesh", "transfer-leader", "--mesh-peers", peers, "--to", "n1"},
                {"mesh", "remove-node", "--mesh-peers", peers, "--node", "n1"}}) {
            String[] args = java.util.Arrays.copyOf(command, command.length + 2);
            args[command.length] = "--timeout";
            args[command.length + 1] = "0.0004";
            CliTest.Run mesh = CliTest.run(args);
            assertThat(mesh.code()).as(String.join(" ", command)).isEqualTo(ExitCodes.USAGE);
            assertThat(mesh.err()).contains("--timeout must be a number of seconds of at least 0.001 (got 0.0004)");
        }
        // the smallest value, and 0 where it means "off", are kept as given
        HubConfig smallest = serve("--auth-timeout", "0.001", "--takeover-cooldown", "0",
                "--shutdown-close-timeout", "0").hubConfig();
        assertThat(smallest.authTimeout()).hasMillis(1);
        assertThat(smallest.takeoverCooldown()).isZero();
        assertThat(smallest.shutdownCloseTimeout()).isZero();
    }
}
