package dev.synapsehub.cli;

import dev.synapsehub.core.SpecConstants;
import dev.synapsehub.core.claim.RegistryLimits;
import dev.synapsehub.net.HubConfig;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import static org.assertj.core.api.Assertions.assertThat;

/** The serve options' defaults for the spec's normative constants are those of {@link SpecConstants}. */
class SpecConstantDefaultsCliTest {

    @Test
    void theDefaultsOfTheNormativeOptionsAreTheSpecConstants() {
        SynapseHubCommand command = new SynapseHubCommand();
        new CommandLine(command).parseArgs();
        RegistryLimits limits = command.serve.registryLimits();
        assertThat(limits.maxClaimsPerPrincipal()).isEqualTo(SpecConstants.MAX_CLAIMS_PER_AGENT);
        assertThat(limits.maxDeclaredPaths()).isEqualTo(SpecConstants.MAX_DECLARED_PATHS);
        HubConfig config = command.serve.hubConfig();
        assertThat(config.messageAuthWindowSeconds()).isEqualTo(SpecConstants.DEFAULT_MESSAGE_AUTH_WINDOW_SECONDS);
        assertThat(config.messageAuthFutureSkewSeconds()).isEqualTo(SpecConstants.DEFAULT_MESSAGE_AUTH_FUTURE_SKEW_SECONDS);
        assertThat(config.leaseOfflineTtlSeconds()).isEqualTo(SpecConstants.DEFAULT_LEASE_OFFLINE_TTL);
    }
}
