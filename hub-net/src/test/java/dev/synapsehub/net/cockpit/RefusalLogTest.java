package dev.synapsehub.net.cockpit;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class RefusalLogTest {
    private static final long MINUTE = 60_000_000_000L;

    @Test
    void aFloodIsLoggedOnceAnIntervalSayingHowManyItCovers() {
        long t = 1_000L;
        RefusalLog log = new RefusalLog(MINUTE, t);
        assertThat(log.refused(t)).as("the first is logged").isEqualTo(1);
        for (int i = 0; i < 1000; i++) {
            assertThat(log.refused(t + i)).isZero();
        }
        assertThat(log.refused(t + MINUTE)).as("the next line covers the flood").isEqualTo(1001);
        assertThat(log.refused(t + MINUTE + 1)).isZero();
    }
}
