package dev.synapsehub.spec;

import dev.synapsehub.core.claim.ClaimRegistry;
import dev.synapsehub.core.command.ClaimCommand;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class PlaceholderSmokeTest {
    @Test
    void firstClaimCarriesEpochOne() {
        ClaimRegistry registry = new ClaimRegistry();
        var decision = registry.decide(ClaimCommand.of("A", "T1"), 1000);
        assertThat(decision.reply().granted()).isTrue();
        decision.events().forEach(registry::apply);
        assertThat(registry.liveClaim("T1", 1000).orElseThrow().epoch()).isEqualTo(1);
    }
}
