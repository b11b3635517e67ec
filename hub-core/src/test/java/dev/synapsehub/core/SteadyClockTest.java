package dev.synapsehub.core;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * Hub time follows the monotonic clock: a step of the wall clock neither expires nor stretches
 * leases at once; it is logged once and hub time slews toward the wall clock by at most 1 %.
 */
class SteadyClockTest {
    private long wallMillis = 1_796_000_000_000L;
    private long nanos = 5_000_000_000L;
    private final List<String> steps = new ArrayList<>();
    private final SteadyClock clock = new SteadyClock(() -> wallMillis, () -> nanos, steps::add);

    /** Both clocks advance by {@code seconds}, in one-second ticks at which the hub reads the time. */
    private double run(double seconds) {
        double t = clock.nowSeconds();
        for (int i = 0; i < (int) seconds; i++) {
            wallMillis += 1000;
            nanos += 1_000_000_000L;
            double next = clock.nowSeconds();
            assertThat(next).as("never backwards").isGreaterThanOrEqualTo(t);
            t = next;
        }
        return t;
    }

    @Test
    void withoutStepsHubTimeIsWallTime() {
        double start = clock.nowSeconds();
        assertThat(start).isEqualTo(1_796_000_000.0);
        assertThat(run(100)).isCloseTo(1_796_000_100.0, within(1e-6));
        assertThat(steps).isEmpty();
    }

    @Test
    void aForwardStepDoesNotExpireLeasesAtOnceAndIsLoggedOnce() {
        double start = clock.nowSeconds();
        double leaseExpiry = start + 60;
        wallMillis += 3_600_000; // the wall clock jumps an hour ahead
        double afterStep = run(30);
        assertThat(afterStep).as("30 s of real time, at most 1 % more").isBetween(start + 30, start + 30.3);
        assertThat(afterStep).isLessThan(leaseExpiry);
        assertThat(run(30)).isLessThan(start + 60.7);
        assertThat(steps).hasSize(1);
        assertThat(steps.get(0)).contains("forward by 3600.000 s");
    }

    @Test
    void aBackwardStepNeverTurnsTimeBackAndSlowsItByAtMostOnePercent() {
        double start = clock.nowSeconds();
        wallMillis -= 120_000;
        double later = run(50);
        assertThat(later).isBetween(start + 49.5, start + 50.0);
        assertThat(steps).singleElement().asString().contains("back by 120.000 s");
    }

    @Test
    void aSmallOffsetConvergesWithoutBeingReportedAndABigOneConvergesAtTheSlewRate() {
        double start = clock.nowSeconds();
        wallMillis += 500; // below the step threshold: absorbed silently
        assertThat(run(60)).isCloseTo(start + 60.5, within(0.002));
        assertThat(steps).isEmpty();
        wallMillis += 10_000; // a 10 s step converges in about 1,000 s at 1 %
        run(500);
        assertThat(wallMillis / 1000.0 - clock.nowSeconds()).isBetween(4.9, 5.1);
        run(600);
        assertThat(clock.nowSeconds()).isCloseTo(wallMillis / 1000.0, within(0.002));
        assertThat(steps).hasSize(1);
    }

    @Test
    void aSecondStepWhileHubTimeIsStillConvergingIsReportedToo() {
        clock.nowSeconds();
        wallMillis += 600_000; // a suspend: ten minutes, about 16 h to converge at 1 %
        run(60);
        assertThat(steps).hasSize(1);
        wallMillis -= 30_000; // an NTP correction half a minute back, long before the first converged
        run(60);
        assertThat(steps).hasSize(2);
        assertThat(steps.get(1)).contains("back by 30.000 s");
        run(120); // the slew alone is no step
        assertThat(steps).hasSize(2);
    }

    @Test
    void theWallReadingFollowsAStepAtOnceWhileHubTimeSlews() {
        double start = clock.nowSeconds();
        wallMillis += 600_000; // a 10-minute suspend: only the wall clock moved
        double hub = run(2);
        assertThat(clock.wallSeconds()).isEqualTo(start + 602);
        assertThat(hub).as("hub time still lags the step").isLessThan(start + 3);
    }
}
