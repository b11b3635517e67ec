package dev.synapsehub.cli;

import dev.synapsehub.net.HubConfig;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import static dev.synapsehub.cli.CliTest.run;
import static org.assertj.core.api.Assertions.assertThat;

/** {@code --max-fanout-delay-ms} and {@code --max-fanout-writes}: validated once at start, in the config and in the effective-config line. */
class FanoutDelayCliTest {

    @Test
    void theBoundsAreRefusedAtStartNamingTheOptionTheDelayMustExceedTheLinger() {
        CliTest.Run zero = run("--port", "0", "--max-fanout-delay-ms", "0");
        assertThat(zero.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(zero.err()).contains("--max-fanout-delay-ms must be more than --broadcast-linger-ms (5)");
        // at or below the linger every broadcast would trip it: refused, the linger named
        CliTest.Run belowLinger = run("--port", "0", "--broadcast-linger-ms", "250", "--max-fanout-delay-ms", "250");
        assertThat(belowLinger.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(belowLinger.err()).contains("--max-fanout-delay-ms must be more than --broadcast-linger-ms (250)");
        CliTest.Run word = run("--port", "0", "--max-fanout-delay-ms", "soon");
        assertThat(word.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(word.err()).contains("--max-fanout-delay-ms");
        CliTest.Run writes = run("--port", "0", "--max-fanout-writes", "0");
        assertThat(writes.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(writes.err()).contains("--max-fanout-writes must be at least 1");
    }

    @Test
    void theBoundsReachTheConfigAndTheEffectiveConfigurationLine() {
        ServeOptions set = serve("--broadcast-linger-ms", "250", "--max-fanout-delay-ms", "900",
                "--max-fanout-writes", "40000");
        HubConfig config = set.hubConfig();
        assertThat(config.maxFanoutDelay()).hasMillis(900);
        assertThat(config.maxFanoutWrites()).isEqualTo(40_000);
        assertThat(set.effectiveSummary(config, set.registryLimits(), set.actorSettings()))
                .containsEntry("max_fanout_delay_ms", 900L).containsEntry("max_fanout_writes", 40_000L);
        ServeOptions defaults = serve();
        assertThat(defaults.hubConfig().maxFanoutDelay()).isEqualTo(HubConfig.DEFAULT_MAX_FANOUT_DELAY);
        assertThat(defaults.effectiveSummary(defaults.hubConfig(), defaults.registryLimits(), defaults.actorSettings()))
                .containsEntry("max_fanout_delay_ms", HubConfig.DEFAULT_MAX_FANOUT_DELAY.toMillis())
                .containsEntry("max_fanout_writes", HubConfig.DEFAULT_MAX_FANOUT_WRITES);
    }

    private static ServeOptions serve(String... args) {
        SynapseHubCommand command = new SynapseHubCommand();
        new CommandLine(command).parseArgs(args);
        return command.serve;
    }
}
