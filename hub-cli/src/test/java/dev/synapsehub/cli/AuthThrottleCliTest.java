package dev.synapsehub.cli;

import dev.synapsehub.net.auth.AuthThrottleSettings;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.time.Duration;

import static dev.synapsehub.cli.CliTest.run;
import static org.assertj.core.api.Assertions.assertThat;

/** {@code --auth-fail-limit} and its companions: validated once at start, in the config and the effective-config line. */
class AuthThrottleCliTest {

    @Test
    void badValuesAreRefusedAtStartNamingTheOption() {
        String[][] refused = {
                {"--auth-fail-limit", "-1", "--auth-fail-limit must be >= 0"},
                {"--auth-fail-window", "0", "--auth-fail-window must be a number of seconds within 0.001..604800"},
                {"--auth-fail-window", "NaN", "--auth-fail-window must be a number of seconds within"},
                {"--auth-backoff", "-5", "--auth-backoff must be a number of seconds within"},
                {"--auth-backoff", "0.0004", "--auth-backoff must be a number of seconds within 0.001..604800 (got 0.0004)"},
                {"--auth-backoff-max", "10", "--auth-backoff-max must be at least --auth-backoff"},
                {"--auth-throttle-hosts", "0", "--auth-throttle-hosts must be at least 1"},
        };
        for (String[] r : refused) {
            CliTest.Run run = run("--port", "0", r[0], r[1]);
            assertThat(run.code()).as(r[0] + " " + r[1]).isEqualTo(ExitCodes.USAGE);
            assertThat(run.err()).contains(r[2]);
        }
    }

    @Test
    void theSettingsReachTheConfigAndTheEffectiveConfigurationLine() {
        ServeOptions set = serve("--auth-fail-limit", "5", "--auth-fail-window", "30", "--auth-backoff", "2.5",
                "--auth-backoff-max", "600", "--auth-throttle-hosts", "50", "--auth-throttle-loopback");
        AuthThrottleSettings t = set.hubConfig().authThrottle();
        assertThat(t).isEqualTo(new AuthThrottleSettings(5, Duration.ofSeconds(30), Duration.ofMillis(2500),
                Duration.ofSeconds(600), 50, true));
        assertThat(set.effectiveSummary(set.hubConfig(), set.registryLimits(), set.actorSettings()))
                .containsEntry("auth_throttle", "5 failures in 30.0 s, back-off 2.5..600.0 s, 50 hosts, loopback too");
        ServeOptions defaults = serve();
        assertThat(defaults.hubConfig().authThrottle()).isEqualTo(AuthThrottleSettings.DEFAULTS);
        assertThat(serve("--auth-fail-limit", "0").effectiveSummary(serve("--auth-fail-limit", "0").hubConfig(),
                defaults.registryLimits(), defaults.actorSettings())).containsEntry("auth_throttle", "off");
    }

    private static ServeOptions serve(String... args) {
        SynapseHubCommand command = new SynapseHubCommand();
        new CommandLine(command).parseArgs(args);
        return command.serve;
    }
}
