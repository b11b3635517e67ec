package dev.synapsehub.net;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The consume-liveness settings' defaults and their refusal of windows that are no windows (§8.6, §13). */
class HubConfigLivenessTest {
    @Test
    void defaultsAreTheContracts() {
        HubConfig c = HubConfig.builder().build();
        assertThat(c.warnStaleRecipients()).isTrue();
        assertThat(c.recipientLivenessWindowSeconds()).isEqualTo(90.0);
        assertThat(c.waiterLivenessWindowSeconds()).isEqualTo(20.0);
        HubConfig set = c.toBuilder().warnStaleRecipients(false).recipientLivenessWindowSeconds(1.5)
                .waiterLivenessWindowSeconds(0.25).build().toBuilder().build();
        assertThat(set.warnStaleRecipients()).isFalse();
        assertThat(set.recipientLivenessWindowSeconds()).isEqualTo(1.5);
        assertThat(set.waiterLivenessWindowSeconds()).isEqualTo(0.25);
    }

    @Test
    void aWindowMustBePositiveAndFinite() {
        for (double bad : new double[] {0, -1, Double.NaN, Double.POSITIVE_INFINITY}) {
            assertThatThrownBy(() -> HubConfig.builder().recipientLivenessWindowSeconds(bad).build())
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("recipient liveness window");
            assertThatThrownBy(() -> HubConfig.builder().waiterLivenessWindowSeconds(bad).build())
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("waiter liveness window");
        }
    }
}
