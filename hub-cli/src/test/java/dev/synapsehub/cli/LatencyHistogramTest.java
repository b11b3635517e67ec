package dev.synapsehub.cli;

import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/** The bench tool's histogram reports quantiles within its stated precision. */
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
        assertThat(h.maxNanos()).isEqualTo(values[values.length - 1]);
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
    }
}
