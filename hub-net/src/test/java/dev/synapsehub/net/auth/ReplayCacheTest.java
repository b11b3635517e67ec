package dev.synapsehub.net.auth;

import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The nonce cache of contract §9: duplicates inside the window are refused, a nonce is
 * remembered exactly as long as a frame carrying it could pass the window check, and with
 * the default capacity 10,000 signed frames a second (with signing times jittered across the
 * −10 s / +1 s budget) are all admitted, none refused as a false replay.
 */
class ReplayCacheTest {
    private static final double WINDOW = 10.0;

    @Test
    void aDuplicateInsideTheWindowIsRefusedAndOtherSendersOrKeysAreNot() {
        ReplayCache cache = new ReplayCache(16, WINDOW);
        assertThat(cache.admit("k1", "a", "n1", 1000.0, SigningTime.at(1000.0))).isTrue();
        assertThat(cache.admit("k1", "a", "n1", 1000.0, SigningTime.at(1005.0))).isFalse();
        assertThat(cache.admit("k1", "b", "n1", 1000.0, SigningTime.at(1005.0))).isTrue();
        assertThat(cache.admit("k2", "a", "n1", 1000.0, SigningTime.at(1005.0))).isTrue();
    }

    @Test
    void aNonceIsKeptThroughTheInclusiveWindowEdgeAndForgottenAfterIt() {
        ReplayCache cache = new ReplayCache(16, WINDOW);
        assertThat(cache.admit("k", "a", "n", 1000.0, SigningTime.at(1000.0))).isTrue();
        // at now = signedAt + window the frame still passes the window check: the replay must be caught
        assertThat(cache.admit("k", "a", "n", 1000.0, SigningTime.at(1010.0))).isFalse();
        assertThat(cache.size()).isEqualTo(1);
        // past it the frame is `expired` anyway, so the nonce is no longer needed
        cache.admit("k", "a", "other", 1010.5, SigningTime.at(1010.5));
        assertThat(cache.size()).isEqualTo(1);
    }

    @Test
    void aFullCacheRefusesNewNoncesAndNeverEvictsALiveOne() {
        ReplayCache cache = new ReplayCache(3, WINDOW);
        for (int i = 0; i < 3; i++) {
            assertThat(cache.admit("k", "a", "n" + i, 1000.0, SigningTime.at(1000.0))).isTrue();
        }
        assertThat(cache.admit("k", "a", "n3", 1000.0, SigningTime.at(1001.0))).isFalse();
        assertThat(cache.admit("k", "a", "n0", 1000.0, SigningTime.at(1001.0))).as("n0 is still remembered").isFalse();
        assertThat(cache.admit("k", "a", "n3", 1011.0, SigningTime.at(1011.0))).as("room again once the others expired").isTrue();
    }

    @Test
    void tenThousandSignedFramesASecondAreAllAdmittedWithTheDefaultCapacity() {
        ReplayCache cache = new ReplayCache(ReplayCache.DEFAULT_CAPACITY, WINDOW);
        SplittableRandom random = new SplittableRandom(7);
        int perSecond = 10_000;
        int seconds = 40;
        int refused = 0;
        int peak = 0;
        for (int i = 0; i < perSecond * seconds; i++) {
            double now = 1000.0 + (double) i / perSecond;
            double signedAt = now - random.nextDouble(-1.0, WINDOW); // anywhere in the budget
            if (!cache.admit("k" + (i % 3), "agent-" + (i % 50), "nonce-" + i, signedAt, SigningTime.at(now))) {
                refused++;
            }
            peak = Math.max(peak, cache.size());
        }
        assertThat(refused).isZero();
        assertThat(peak).as("live nonces stay bounded by rate x (window + skew)")
                .isLessThanOrEqualTo((int) (perSecond * (WINDOW + 1.0)) + 1);
    }

    @Test
    void aWallClockSteppedBackCannotReadmitANonce() {
        ReplayCache cache = new ReplayCache(16, WINDOW);
        assertThat(cache.admit("k", "a", "n", 1000.0, new SigningTime(1000.0, 50.0))).isTrue();
        // 11 s of hub (monotonic) time later the wall clock has been stepped back 30 s
        assertThat(cache.admit("k", "a", "other", 981.0, new SigningTime(981.0, 61.0))).isTrue();
        // the wall clock reaches the frame's window again: the nonce must still be remembered
        assertThat(cache.admit("k", "a", "n", 1000.0, new SigningTime(1009.5, 89.5)))
                .as("a replay inside the frame's window by the wall clock").isFalse();
        // once the wall clock is past the window it is forgotten
        cache.admit("k", "a", "late", 1011.0, new SigningTime(1011.0, 91.0));
        assertThat(cache.size()).as("only 'late': 'n' and 'other' are past their windows").isEqualTo(1);
    }

    @Test
    void aWallClockSteppedForwardStillRemembersANonceForItsWindowInHubTime() {
        ReplayCache cache = new ReplayCache(16, WINDOW);
        assertThat(cache.admit("k", "a", "n", 1000.0, new SigningTime(1000.0, 50.0))).isTrue();
        // the wall clock jumps 60 s ahead, then back again after 5 s of hub time
        cache.admit("k", "a", "x", 1060.0, new SigningTime(1060.0, 52.0));
        assertThat(cache.admit("k", "a", "n", 1000.0, new SigningTime(1003.0, 55.0))).isFalse();
    }

    @Test
    void aReleasedNonceIsAdmittedAgainAndFreesItsShare() {
        ReplayCache cache = new ReplayCache(16, WINDOW);
        java.util.List<ReplayCache.Share> share = java.util.List.of(new ReplayCache.Share("k", 1));
        assertThat(cache.admit("k", "a", "n", 1000.0, SigningTime.at(1000.0), share)).isEqualTo(ReplayCache.Admission.ADMITTED);
        assertThat(cache.admit("k", "a", "m", 1000.0, SigningTime.at(1000.0), share)).isEqualTo(ReplayCache.Admission.FULL);
        cache.release("k", "a", "n");
        assertThat(cache.charged("k")).isZero();
        assertThat(cache.admit("k", "a", "n", 1000.0, SigningTime.at(1001.0), share)).isEqualTo(ReplayCache.Admission.ADMITTED);
        // the released entry's old deadline passing does not forget the re-admitted one early
        assertThat(cache.admit("k", "a", "n", 1000.0, SigningTime.at(1010.0), share)).isEqualTo(ReplayCache.Admission.REPLAYED);
        assertThat(cache.admit("k", "a", "z", 1010.5, SigningTime.at(1010.5), share)).isEqualTo(ReplayCache.Admission.ADMITTED);
        assertThat(cache.charged("k")).isEqualTo(1);
    }
}
