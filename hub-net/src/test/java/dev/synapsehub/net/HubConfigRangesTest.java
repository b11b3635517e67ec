package dev.synapsehub.net;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Values a hub cannot run with are refused by the constructor, for programmatic use too, not clamped. */
class HubConfigRangesTest {
    @Test
    void theHubConfigRefusesABurstBelowOneToo() {
        assertThatThrownBy(() -> HubConfig.builder().ratePerSecond(5).rateBurst(0).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("burst >= 1");
        assertThatThrownBy(() -> HubConfig.builder().ratePerSecond(Double.NaN).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("rate must be >= 0");
    }

    @Test
    void theHubConfigRefusesCountsOutOfRange() {
        assertThatThrownBy(() -> HubConfig.builder().maxClients(0).build()).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("max clients");
        assertThatThrownBy(() -> HubConfig.builder().maxConnectionsPerHost(-1).build())
                .hasMessageContaining("max connections per host");
        assertThatThrownBy(() -> HubConfig.builder().maxUnauthClients(-3).build())
                .hasMessageContaining("max unauthenticated clients");
        assertThatThrownBy(() -> HubConfig.builder().presenceFanoutLimit(-1).build())
                .hasMessageContaining("presence fan-out limit");
        assertThatThrownBy(() -> HubConfig.builder().messageAuthReplayCapacity(0).build())
                .hasMessageContaining("replay capacity");
        assertThatThrownBy(() -> HubConfig.builder().authTimeout(Duration.ZERO).build())
                .hasMessageContaining("auth timeout");
    }
}
