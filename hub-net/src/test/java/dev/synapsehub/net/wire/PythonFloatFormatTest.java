package dev.synapsehub.net.wire;

import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/** The fast path of {@link PythonFloatFormat} agrees with the exact digit search (seeded). */
class PythonFloatFormatTest {
    private static final long SEED = 0x5eed_f10a7L;

    @Test
    void fastPathAgreesWithTheDigitSearchOnRandomDoubles() {
        SplittableRandom random = new SplittableRandom(SEED);
        for (int i = 0; i < 20_000; i++) {
            double any = Double.longBitsToDouble(random.nextLong());
            if (Double.isFinite(any)) {
                assertSame(any);
            }
        }
    }

    @Test
    void fastPathAgreesOnTimestampsAndShortDecimals() {
        SplittableRandom random = new SplittableRandom(SEED + 1);
        for (int i = 0; i < 20_000; i++) {
            assertSame(random.nextLong(1_000_000_000_000L, 4_000_000_000_000L) / 1000.0); // ms timestamps
            assertSame(random.nextLong(1_000_000_000_000_000L, 4_000_000_000_000_000L) / 1e6); // µs timestamps
            assertSame(random.nextInt(1, 100_000) * Math.pow(10, random.nextInt(-320, 300)));
            assertSame(random.nextDouble() * Math.pow(10, random.nextInt(-20, 20)));
        }
    }

    @Test
    void fastPathAgreesAtTheEdges() {
        double[] edges = {Double.MIN_VALUE, Double.MIN_NORMAL, 0x1p-1000, Math.nextDown(0x1p-1000), Math.nextUp(0x1p-1000),
            Double.MAX_VALUE, 1e15, 1e16, 9007199254740993.0, 0.1 + 0.2, 1e23, 8.41e21, 2e-3, 5e-324};
        for (double d : edges) {
            assertSame(d);
        }
    }

    private static void assertSame(double d) {
        assertThat(PythonFloatFormat.format(d)).as("%s", Double.toHexString(d)).isEqualTo(PythonFloatFormat.formatBySearch(d));
        assertThat(PythonFloatFormat.format(-d)).isEqualTo(PythonFloatFormat.formatBySearch(-d));
    }
}
