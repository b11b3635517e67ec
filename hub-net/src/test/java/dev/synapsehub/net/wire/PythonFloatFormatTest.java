package dev.synapsehub.net.wire;

import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link PythonFloatFormat} against an independent oracle: the definition of Python's
 * {@code repr} worked out by brute force with exact decimal arithmetic (for each length from
 * one digit up, the two decimals of that length around the exact value; the first length where
 * one of them parses back wins, the closer of two, the even on a tie), over every power of
 * two, subnormals, boundaries and random bit patterns. Plus reprs printed by CPython itself.
 */
class PythonFloatFormatTest {
    private static final long SEED = 0x5eed_f10a7L;

    @Test
    void matchesWhatCPythonPrints() {
        assertThat(PythonFloatFormat.format(0x1p-24)).isEqualTo("5.960464477539063e-08");
        assertThat(PythonFloatFormat.format(Double.MIN_VALUE)).isEqualTo("5e-324");
        assertThat(PythonFloatFormat.format(1e16)).isEqualTo("1e+16");
        assertThat(PythonFloatFormat.format(1e23)).isEqualTo("1e+23");
        assertThat(PythonFloatFormat.format(0.1 + 0.2)).isEqualTo("0.30000000000000004");
        assertThat(PythonFloatFormat.format(1795976357.5882967)).isEqualTo("1795976357.5882967");
        assertThat(PythonFloatFormat.format(1e-5)).isEqualTo("1e-05");
        assertThat(PythonFloatFormat.format(0.0001)).isEqualTo("0.0001");
        assertThat(PythonFloatFormat.format(123456789012345680.0)).isEqualTo("1.2345678901234568e+17");
        assertThat(PythonFloatFormat.format(Double.MAX_VALUE)).isEqualTo("1.7976931348623157e+308");
        assertThat(PythonFloatFormat.format(100.0)).isEqualTo("100.0");
        assertThat(PythonFloatFormat.format(-2.5)).isEqualTo("-2.5");
        assertThat(PythonFloatFormat.format(-0.0)).isEqualTo("-0.0");
        assertThat(PythonFloatFormat.format(9007199254740993.0)).isEqualTo("9007199254740992.0");
    }

    @Test
    void everyPowerOfTwo() {
        for (int e = -1074; e <= 1023; e++) {
            assertOracle(Math.scalb(1.0, e));
        }
    }

    @Test
    void subnormalsAndBoundaries() {
        SplittableRandom random = new SplittableRandom(SEED);
        List<Double> values = new ArrayList<>(List.of(Double.MIN_VALUE, 2 * Double.MIN_VALUE, 3 * Double.MIN_VALUE,
                Double.MIN_NORMAL, Math.nextDown(Double.MIN_NORMAL), Math.nextUp(Double.MIN_NORMAL),
                Double.MAX_VALUE, Math.nextDown(Double.MAX_VALUE), 1.0, Math.nextUp(1.0), Math.nextDown(1.0)));
        for (int i = 0; i < 5_000; i++) {
            values.add(Double.longBitsToDouble(random.nextLong(1, 1L << 52))); // subnormal
        }
        for (int k = -323; k <= 308; k++) {
            double p = Double.parseDouble("1e" + k);
            values.add(p);
            values.add(Math.nextUp(p));
            values.add(Math.nextDown(p));
        }
        for (double d : values) {
            assertOracle(d);
        }
    }

    @Test
    void randomBitPatternsAndTimestamps() {
        SplittableRandom random = new SplittableRandom(SEED + 1);
        for (int i = 0; i < 30_000; i++) {
            double any = Double.longBitsToDouble(random.nextLong());
            if (Double.isFinite(any)) {
                assertOracle(any);
            }
            assertOracle(random.nextLong(1_000_000_000_000_000L, 4_000_000_000_000_000L) / 1e6); // µs timestamps
        }
    }

    private static void assertOracle(double any) {
        double d = Math.abs(any);
        assertThat(PythonFloatFormat.format(d)).as("%s", Double.toHexString(d)).isEqualTo(oracle(d));
        assertThat(PythonFloatFormat.format(-d)).as("-%s", Double.toHexString(d)).isEqualTo("-" + oracle(d));
    }

    /** Python's repr of a finite, non-zero, positive double, by definition and exact arithmetic. */
    private static String oracle(double v) {
        BigDecimal exact = new BigDecimal(v);
        BigDecimal chosen = null;
        for (int p = 1; p <= 17 && chosen == null; p++) {
            BigDecimal down = exact.round(new MathContext(p, RoundingMode.FLOOR));
            BigDecimal up = exact.round(new MathContext(p, RoundingMode.CEILING));
            boolean downFits = Double.parseDouble(down.toString()) == v;
            boolean upFits = Double.parseDouble(up.toString()) == v;
            if (downFits && upFits) {
                int order = exact.subtract(down).compareTo(up.subtract(exact));
                boolean downEven = down.unscaledValue().testBit(0) == false;
                chosen = order < 0 || (order == 0 && downEven) ? down : up;
            } else if (downFits) {
                chosen = down;
            } else if (upFits) {
                chosen = up;
            }
        }
        chosen = chosen.stripTrailingZeros();
        int exponent = chosen.precision() - chosen.scale() - 1;
        if (exponent >= -4 && exponent < 16) {
            String plain = chosen.toPlainString();
            return plain.contains(".") ? plain : plain + ".0";
        }
        String digits = chosen.unscaledValue().toString();
        String mantissa = digits.length() == 1 ? digits : digits.charAt(0) + "." + digits.substring(1);
        return mantissa + "e" + (exponent < 0 ? "-" : "+") + String.format("%02d", Math.abs(exponent));
    }
}
