package dev.synapsehub.cli;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A hub start builds no subcommand model (picocli's reflection over them loaded some 900 classes
 * before the first option was read); every command line that could reach a subcommand, ask for
 * the help or fail to parse gets the full command line, so what it does and says is unchanged.
 */
class SubcommandsOnDemandTest {

    @Test
    void aHubStartBuildsNoSubcommandAndParsesItsOptionsAsTheFullCommandLineDoes() {
        String[] args = {"--port", "0", "--db", "/tmp/none.db", "--metrics", "--default-delivery", "scoped"};
        CommandLine lean = SynapseHubCommand.commandLine(args);
        assertThat(lean.getSubcommands()).isEmpty();

        CommandLine full = new CommandLine(new SynapseHubCommand());
        SynapseHubCommand.SUBCOMMANDS.forEach(full::addSubcommand);
        assertThat(options(lean.parseArgs(args))).isEqualTo(options(full.parseArgs(args)))
                .contains("--db=/tmp/none.db", "--default-delivery=scoped");
    }

    @Test
    void aSubcommandHelpAnArgumentFileOrAnErrorGetsEverySubcommand() {
        int all = SynapseHubCommand.SUBCOMMANDS.size();
        for (String[] args : List.of(new String[] {"claim", "T1"}, new String[] {"--help"}, new String[] {"-h"},
                new String[] {"--port", "0", "mesh", "status"}, new String[] {"--db", "journal"},
                new String[] {"@args.txt"}, new String[] {"clam"}, new String[] {"--no-such-flag"},
                new String[] {"generate-completion"})) {
            assertThat(SynapseHubCommand.commandLine(args).getSubcommands()).as(String.join(" ", args)).hasSize(all);
        }
        assertThat(CliTest.run("--help").out()).contains("claim").contains("journal").contains("mesh")
                .contains("bench");
    }

    private static List<String> options(CommandLine.ParseResult parsed) {
        return parsed.matchedOptions().stream()
                .map(o -> o.longestName() + "=" + String.valueOf((Object) o.getValue()))
                .sorted().toList();
    }
}
