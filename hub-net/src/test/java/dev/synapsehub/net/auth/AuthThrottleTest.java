package dev.synapsehub.net.auth;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/** Failed authentication attempts per remote host: back-off after the limit, doubling, per host, bounded. */
class AuthThrottleTest {
    private static final long SECOND = 1_000_000_000L;

    private final AtomicLong now = new AtomicLong();
    private final AtomicLong refused = new AtomicLong();

    private AuthThrottle throttle(int failures, int hosts, boolean loopback) {
        return new AuthThrottle(new AuthThrottleSettings(failures, Duration.ofSeconds(60), Duration.ofSeconds(10),
                Duration.ofSeconds(40), hosts, loopback), now::get, refused);
    }

    private void at(long seconds) {
        now.set(seconds * SECOND);
    }

    private static void fail(AuthThrottle t, String host, int times) {
        for (int i = 0; i < times; i++) {
            t.failed(host);
        }
    }

    @Test
    void theLimitthFailureStartsABackOffForThatHostOnly() {
        AuthThrottle t = throttle(3, 100, false);
        fail(t, "10.0.0.1", 2);
        assertThat(t.blockedFor("10.0.0.1")).as("below the limit: checked as usual").isZero();
        t.failed("10.0.0.1");
        assertThat(t.blockedFor("10.0.0.1")).isEqualTo(10);
        assertThat(t.blockedFor("10.0.0.2")).as("another host is not touched").isZero();
        at(9);
        assertThat(t.blockedFor("10.0.0.1")).isEqualTo(1);
        assertThat(refused).as("each refusal counted").hasValue(2);
        at(10);
        assertThat(t.blockedFor("10.0.0.1")).as("the back-off has passed").isZero();
        assertThat(refused).hasValue(2);
    }

    @Test
    void anEpisodeIsReportedForItsLogOnceNotOncePerAttempt() {
        AuthThrottle t = throttle(3, 100, false);
        assertThat(t.failed("10.0.0.1")).isFalse();
        assertThat(t.failed("10.0.0.1")).isFalse();
        assertThat(t.failed("10.0.0.1")).as("the limit-th failure starts the episode").isTrue();
        for (int i = 0; i < 50; i++) {
            assertThat(t.blockedFor("10.0.0.1")).isPositive();
        }
        assertThat(refused).hasValue(50);
        at(30);
        assertThat(t.failed("10.0.0.1")).isFalse();
        assertThat(t.failed("10.0.0.1")).isFalse();
        assertThat(t.failed("10.0.0.1")).as("the next episode, reported once again").isTrue();
    }

    @Test
    void eachFurtherEpisodeDoublesTheBackOffUpToTheCap() {
        AuthThrottle t = throttle(2, 100, false);
        long[] expected = {10, 20, 40, 40};
        long at = 0;
        for (long backoff : expected) {
            at(at);
            fail(t, "10.0.0.1", 2);
            assertThat(t.blockedFor("10.0.0.1")).isEqualTo(backoff);
            at += backoff;
        }
    }

    @Test
    void aHostQuietForTheLongestBackOffAfterItsBackOffStartsAfresh() {
        AuthThrottle t = throttle(2, 100, false);
        fail(t, "10.0.0.1", 2); // blocked until 10 s
        at(10 + 40 + 60);
        fail(t, "10.0.0.1", 2);
        assertThat(t.blockedFor("10.0.0.1")).as("forgiven: the first back-off again, not twice it").isEqualTo(10);
    }

    @Test
    void failuresFurtherApartThanTheWindowDoNotAddUp() {
        AuthThrottle t = throttle(3, 100, false);
        fail(t, "10.0.0.1", 2);
        at(60);
        t.failed("10.0.0.1");
        assertThat(t.blockedFor("10.0.0.1")).isZero();
        fail(t, "10.0.0.1", 2);
        assertThat(t.blockedFor("10.0.0.1")).as("three within the new window").isEqualTo(10);
    }

    @Test
    void oneHostsFailuresNeverBlockAnotherAndTheOtherKeepsItsOwnCount() {
        AuthThrottle t = throttle(3, 100, false);
        fail(t, "10.0.0.1", 3);
        fail(t, "10.0.0.2", 2);
        assertThat(t.blockedFor("10.0.0.2")).isZero();
        t.failed("10.0.0.2");
        assertThat(t.blockedFor("10.0.0.2")).isEqualTo(10);
    }

    @Test
    void loopbackIsExemptUnlessAskedForAndAZeroLimitIsOff() {
        AuthThrottle exempt = throttle(1, 100, false);
        exempt.failed("127.0.0.1");
        exempt.failed("::1");
        assertThat(exempt.blockedFor("127.0.0.1")).isZero();
        assertThat(exempt.blockedFor("::1")).isZero();
        assertThat(exempt.hosts()).isZero();
        AuthThrottle counted = throttle(1, 100, true);
        counted.failed("127.0.0.1");
        assertThat(counted.blockedFor("127.0.0.1")).isEqualTo(10);
        AuthThrottle off = throttle(0, 100, true);
        off.failed("10.0.0.1");
        assertThat(off.blockedFor("10.0.0.1")).isZero();
        assertThat(off.hosts()).isZero();
    }

    @Test
    void loopbackIsToldByTheAddressText() {
        for (String host : new String[] {"127.0.0.1", "127.8.9.10", "::1", "0:0:0:0:0:0:0:1", "0:0:0:0:0:0:0:1%lo",
                "::ffff:127.0.0.1"}) {
            assertThat(AuthThrottle.loopback(host)).as(host).isTrue();
        }
        for (String host : new String[] {"10.0.0.1", "128.0.0.1", "::2", "fe80::1", "localhost.example", ""}) {
            assertThat(AuthThrottle.loopback(host)).as(host).isFalse();
        }
    }

    @Test
    void theTableIsBoundedAndForgetsQuietHostsBeforeABlockedOne() {
        AuthThrottle t = throttle(2, 3, false);
        t.failed("10.0.0.9"); // quiet from 60 s on
        at(30);
        fail(t, "10.0.0.1", 2); // blocked until 40 s, then owes a doubled back-off until 80 s
        at(61);
        t.failed("10.0.0.2");
        t.failed("10.0.0.3"); // the table is full: the quiet one goes, not the blocked one
        assertThat(t.hosts()).isEqualTo(3);
        fail(t, "10.0.0.1", 2);
        assertThat(t.blockedFor("10.0.0.1")).as("its episode was remembered: twice the first back-off").isEqualTo(20);
        for (int i = 0; i < 10_000; i++) { // a flood of addresses: bounded, the oldest ones go
            t.failed("10.1." + (i >> 8) + "." + (i & 255));
        }
        assertThat(t.hosts()).isLessThanOrEqualTo(3);
    }
}
