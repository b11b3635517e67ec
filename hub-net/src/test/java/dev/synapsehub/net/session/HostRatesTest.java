package dev.synapsehub.net.session;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The per-host buckets: shared by the host's frames, refilled by time only, and forgotten once full again. */
class HostRatesTest {
    private static final long SECOND = 1_000_000_000L;

    @Test
    void aHostsBucketRefillsWithTimeNotWithNewSockets() {
        HostRates rates = new HostRates(2, 3);
        for (int i = 0; i < 3; i++) {
            assertThat(rates.take("10.0.0.1", 0)).isTrue();
        }
        assertThat(rates.take("10.0.0.1", 0)).isFalse();
        assertThat(rates.take("10.0.0.2", 0)).as("another host has its own bucket").isTrue();
        assertThat(rates.take("10.0.0.1", SECOND / 2)).as("half a second at 2/s: one token").isTrue();
        assertThat(rates.take("10.0.0.1", SECOND / 2)).isFalse();
    }

    @Test
    void bucketsFullAgainAreForgottenSoTheMapHoldsOnlyRecentHosts() {
        HostRates rates = new HostRates(10, 5);
        for (int i = 0; i < 5000; i++) {
            rates.take("10.1." + (i / 256) + "." + (i % 256), 0);
        }
        assertThat(rates.hosts()).isEqualTo(5000);
        rates.take("10.9.0.1", 0); // still draining: kept
        for (int i = 0; i < 1024; i++) { // a second later every bucket is full again; the next sweep drops them
            rates.take("10.2." + (i / 256) + "." + (i % 256), 10 * SECOND);
        }
        assertThat(rates.hosts()).isLessThan(1100);
    }
}
