package dev.synapsehub.cli;

import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/** The bench tool's histogram (HdrHistogram underneath) reports quantiles within its stated precision. */
class LatencyHistogramTest {
    @Test
    void quantilesAreWithinTwoPercentOfTheExactOnes() {
        LatencyHistogram h = new LatencyHistogram();
        Random random = new Random(7);
        long[] values = new long[100_000];
        for (int i = 0; i < values.length; i++) {
            values[i] = 1_000 + (long) (Math.abs(random.nextGaussian()) * 500_000);
            h.record(values[i]);
        }
        Arrays.sort(values);
        for (double q : new double[] {0.5, 0.9, 0.99, 0.999}) {
            long exact = values[(int) Math.ceil(q * values.length) - 1];
            assertThat((double) h.quantileNanos(q)).as("q=%s", q).isBetween(exact * 0.98, exact * 1.02);
        }
        long max = values[values.length - 1];
        assertThat((double) h.maxNanos()).isBetween(max * 0.999, max * 1.001);
        assertThat(h.count()).isEqualTo(values.length);
    }

    @Test
    void smallValuesAreExact() {
        LatencyHistogram h = new LatencyHistogram();
        h.record(5);
        h.record(7);
        assertThat(h.quantileNanos(0.5)).isEqualTo(5);
        assertThat(h.quantileNanos(1.0)).isEqualTo(7);
        assertThat(new LatencyHistogram().quantileNanos(0.5)).isZero();
        assertThat(new LatencyHistogram().maxNanos()).isZero();
    }

    @Test
    void readsBetweenRecordsSeeEverythingRecordedSoFar() {
        LatencyHistogram h = new LatencyHistogram();
        h.record(1_000);
        assertThat(h.count()).isEqualTo(1);
        h.record(2_000);
        h.record(3_000);
        assertThat(h.count()).isEqualTo(3);
        assertThat(h.quantileNanos(1.0)).isBetween(3_000L, 3_003L); // within 0.1 %
        assertThat(h.quantileNanos(0.01)).isEqualTo(1_000); // below 2,048 values are exact
    }

    @Test
    void recordsFromManyThreadsAreAllCounted() throws Exception {
        LatencyHistogram h = new LatencyHistogram();
        Thread[] threads = new Thread[4];
        for (int t = 0; t < threads.length; t++) {
            threads[t] = new Thread(() -> {
                for (int i = 1; i <= 10_000; i++) {
                    h.record(i);
                }
            });
            threads[t].start();
        }
        long seenWhileRecording = h.count(); // reading while others record is allowed
        for (Thread t : threads) {
            t.join();
        }
        assertThat(seenWhileRecording).isBetween(0L, 40_000L);
        assertThat(h.count()).isEqualTo(40_000);
        assertThat(h.quantileNanos(1.0)).isBetween(10_000L, 10_010L);
    }
}
