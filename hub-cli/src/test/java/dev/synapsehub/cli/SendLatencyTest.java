package dev.synapsehub.cli;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A paced run's latency counts from when the request was due, so a hub stall shows in every
 * request that waited for it (no coordinated omission); the actual-send figure is kept beside it.
 */
class SendLatencyTest {
    private static final long MS = 1_000_000;

    @Test
    void aRequestSentLateCountsItsWaitFromTheIntendedInstant() {
        SendLatency l = new SendLatency();
        // due at 100 ms, sent only at 150 ms because the slot waited for a late answer, answered at 151 ms
        l.record(100 * MS, 150 * MS, 151 * MS);
        assertThat(l.fromIntended().quantileNanos(1.0)).isBetween(51 * MS - 51 * MS / 1000, 51 * MS + 51 * MS / 1000);
        assertThat(l.fromActual().quantileNanos(1.0)).isBetween(MS - MS / 1000, MS + MS / 1000);
        assertThat(l.count()).isEqualTo(1);
    }

    @Test
    void aStallShowsInEveryRequestDueDuringItFromTheIntendedInstantOnly() {
        SendLatency l = new SendLatency();
        // a request every 10 ms; the hub stalls 1 s on the first, then answers each in 1 ms
        long stallEnd = 1_000 * MS;
        l.record(0, 0, stallEnd);
        for (int k = 1; k < 100; k++) {
            long due = k * 10 * MS;
            long sent = Math.max(due, stallEnd + (k - 1) * MS); // queued behind the stall, sent back to back
            l.record(due, sent, sent + MS);
        }
        // from the actual send, 99 of 100 requests look like 1 ms: the stall hides behind one sample
        assertThat(l.fromActual().quantileNanos(0.5)).isLessThanOrEqualTo(MS + MS / 1000);
        assertThat(l.fromActual().quantileNanos(0.98)).isLessThanOrEqualTo(MS + MS / 1000);
        // from the intended instant, the median request waited about half the stall
        assertThat(l.fromIntended().quantileNanos(0.5)).isGreaterThan(400 * MS);
        assertThat(l.fromIntended().quantileNanos(0.98)).isGreaterThan(900 * MS);
    }

    @Test
    void inAClosedLoopBothFiguresAreTheSame() {
        SendLatency l = new SendLatency();
        l.record(5 * MS, 5 * MS, 7 * MS);
        assertThat(l.fromIntended().quantileNanos(0.5)).isEqualTo(l.fromActual().quantileNanos(0.5));
    }

    @Test
    void anIntendedInstantAfterTheSendCountsFromTheSend() {
        SendLatency l = new SendLatency();
        l.record(9 * MS, 5 * MS, 7 * MS);
        assertThat(l.fromIntended().quantileNanos(0.5)).isEqualTo(l.fromActual().quantileNanos(0.5));
    }
}
