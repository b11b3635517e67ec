package dev.synapsehub.net.session;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

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
    @Test
    void fullBucketsAreForgottenAsNewHostsArriveNotOnlyEveryFewThousand() {
        HostRates rates = new HostRates(10, 5);
        for (int i = 0; i < 100; i++) {
            rates.take("10.1.0." + i, 0);
        }
        assertThat(rates.hosts()).isEqualTo(100);
        for (int i = 0; i < 20; i++) { // a second later the first hundred are full again
            rates.take("10.2.0." + i, SECOND);
        }
        assertThat(rates.hosts()).as("each arrival forgets a few full buckets: only the 20 draining ones are left")
                .isEqualTo(20);
        for (int i = 0; i < 100; i++) {
            assertThat(rates.take("10.1.0." + i, SECOND)).as("a forgotten host starts from a full bucket").isTrue();
        }
    }

    @Test
    void underAFloodOfNewAddressesTheTableHoldsOnlyTheDrainingBuckets() {
        HostRates rates = new HostRates(1000, 2); // a taken token is back within 1 ms
        int most = 0;
        for (int i = 0; i < 20_000; i++) { // one new address a millisecond
            rates.take("10." + (i >> 16) + "." + ((i >> 8) & 255) + "." + (i & 255), i * (SECOND / 1000));
            most = Math.max(most, rates.hosts());
        }
        assertThat(most).as("the table never grows past the few buckets still refilling").isLessThanOrEqualTo(4);
    }

    @Test
    void aBusyHostIsNeverForgottenWhileItsBucketIsDrained() {
        HostRates rates = new HostRates(1, 3);
        for (int i = 0; i < 3; i++) {
            assertThat(rates.take("10.0.0.1", 0)).isTrue();
        }
        for (int i = 0; i < 1000; i++) { // a flood of other hosts, within the busy host's refill time
            rates.take("10.3." + (i / 256) + "." + (i % 256), SECOND / 2);
        }
        assertThat(rates.take("10.0.0.1", SECOND / 2)).as("its drained bucket was kept, not replaced by a full one")
                .isFalse();
    }

    @Test
    void aBucketMarkedForgottenButStillMappedDoesNotMakeTakeSpin() {
        HostRates rates = new HostRates(1, 3);
        for (int i = 0; i < 3; i++) {
            assertThat(rates.take("10.0.0.1", 0)).isTrue();
        }
        rates.markForgotten("10.0.0.1"); // its forgetter preempted before buckets.remove
        Boolean taken = assertTimeoutPreemptively(Duration.ofSeconds(10), () -> rates.take("10.0.0.1", 0),
                "take() spun on the forgotten bucket still in the map");
        assertThat(taken).as("the host's next bucket counts the frame: it starts full").isTrue();
        assertThat(rates.hosts()).isEqualTo(1);
        assertThat(rates.take("10.0.0.1", 0)).as("the new bucket is the one kept: 2 tokens left").isTrue();
    }
}
