package dev.synapsehub.cli;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An option before a subcommand is parsed as the hub start's, which the subcommand never runs:
 * {@code synapse-hub --port 9000 who} asked the hub on 8876. It is refused (exit 2) with where
 * the option goes; the options that apply to every command (logging, the config file) stay allowed.
 */
class HubOptionsBeforeSubcommandTest {

    @Test
    void aHubOptionBeforeASubcommandIsRefusedWithWhereItGoes() {
        CliTest.Run who = CliTest.run("--port", "9000", "who");
        assertThat(who.code()).as(who.out() + who.err()).isEqualTo(ExitCodes.USAGE);
        assertThat(who.err()).contains("--port").contains("before the subcommand who")
                .contains("put a subcommand's options after it").contains("synapse-hub who --help");
        assertThat(who.out()).isEmpty();

        CliTest.Run verify = CliTest.run("--db", "hub.db", "--metrics", "journal", "verify", "--db", "other.db");
        assertThat(verify.code()).as(verify.out() + verify.err()).isEqualTo(ExitCodes.USAGE);
        assertThat(verify.err()).contains("--db, --metrics are").contains("before the subcommand journal")
                .contains("synapse-hub journal verify --help");
    }

    @Test
    void loggingOptionsMayComeBeforeASubcommand() {
        CliTest.Run who = CliTest.run("--log-level", "warn", "--log-format", "text", "who", "--url", "ws://127.0.0.1:1",
                "--timeout", "2");
        assertThat(who.code()).as("refused only by the unreachable hub: " + who.err()).isEqualTo(ExitCodes.UNAVAILABLE);
        assertThat(who.err()).doesNotContain("before the subcommand");
    }
}
