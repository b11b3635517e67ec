package dev.synapsehub.cli;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code config/synapse-hub.properties} names every flag of the hub and loads through {@code --config}. */
class ConfigExampleTest {
    private static final Path EXAMPLE = Path.of("..", "config", "synapse-hub.properties");
    private static final Path UNIT = Path.of("..", "config", "synapse-hub.service");

    /** docs/federation.md promises that every flag is in operations.md. */
    @Test
    void theOperationsGuideNamesEveryFlagOfTheHub() throws Exception {
        String text = Files.readString(Path.of("..", "docs", "operations.md"));
        List<String> missing = new ArrayList<>();
        for (OptionSpec option : new CommandLine(new SynapseHubCommand()).getCommandSpec().options()) {
            String name = option.longestName();
            if (!Set.of("--help", "--version").contains(name)
                    && !Pattern.compile(Pattern.quote(name) + "(?![a-z0-9-])").matcher(text).find()) {
                missing.add(name);
            }
        }
        assertThat(missing).as("flags docs/operations.md does not name").isEmpty();
    }

    @Test
    void theExampleNamesEveryFlagOfTheHub() throws Exception {
        String text = Files.readString(EXAMPLE);
        Set<String> keys = new java.util.TreeSet<>();
        Matcher m = Pattern.compile("(?m)^#?([a-z][a-z0-9-]*)=").matcher(text);
        while (m.find()) {
            keys.add(m.group(1));
        }
        List<String> missing = new ArrayList<>();
        for (OptionSpec option : new CommandLine(new SynapseHubCommand()).getCommandSpec().options()) {
            String name = option.longestName().replaceFirst("^--", "");
            if (!Set.of("help", "version", "config").contains(name) && !keys.contains(name)) {
                missing.add(name);
            }
        }
        assertThat(missing).as("flags the example does not name").isEmpty();
    }

    @Test
    void theConfigFileLoaderAcceptsTheExample() {
        SynapseHubCommand command = CliTest.parsed("--config", EXAMPLE.toString()); // an unknown key fails here
        ServeOptions serve = command.serve;
        var config = serve.hubConfig();
        assertThat(config.metricsEnabled()).as("metrics=true came from the file").isTrue();
        assertThat(config.ui()).as("ui=true came from the file").isTrue();
        assertThat(config.port()).isEqualTo(8876);
        assertThat(serve.db()).isEqualTo(Path.of("/var/lib/synapse-hub/hub.db"));
        assertThat(serve.registryLimits().maxClaimsPerPrincipal()).isEqualTo(128);
        serve.newState();
        serve.snapshotPolicy();
        serve.retention();
        serve.actorSettings();
        assertThat(serve.meshConfig()).isNull();
        assertThat(command.federation.servingTrust(false, line -> { })).isNotNull();
    }

    @Test
    void theSystemdUnitRunsTheHubWithTheExample() throws Exception {
        String unit = Files.readString(UNIT);
        assertThat(unit).contains("[Unit]").contains("[Service]").contains("[Install]");
        assertThat(unit).contains("--config /etc/synapse-hub/synapse-hub.properties");
        assertThat(unit).as("the token comes from a credential, never the command line").doesNotContain("--token ")
                .contains("LoadCredential=token:");
        assertThat(unit).as("a writer failure exits non-zero; systemd restarts it").contains("Restart=on-failure");
    }
}
